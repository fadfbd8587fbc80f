"""How much a task's golds vary across its kept queries: the constant-answer check and the spreads.

A benchmark whose golds barely change from query to query can be passed without the analysis: the
best single constant answer is the value that matches the most golds within their tolerances
(`best_constant_share`); the `validity` gates bound its share (`stages.scoring.aggregate.gates`). For a
non-numeric gold (coordinates, lists, categories, booleans) it is the most common answer. A metrics
task reports the spread of its golds and of each reference model's values instead.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from statistics import median

from stages.layout import task_dir
from stages.scoring.query.references import read_references


def best_constant_share(golds: list[float], tolerances: list[float]) -> tuple[float, float | None]:
    """(share of queries the best single constant answer matches, that constant)."""
    if not golds:
        return 0.0, None
    candidates = sorted({g + s * t for g, t in zip(golds, tolerances, strict=True) for s in (-1, 0, 1)})
    best = max(candidates, key=lambda c: (sum(abs(c - g) <= t + 1e-12 for g, t in
                                              zip(golds, tolerances, strict=True)), -abs(c)))
    hits = sum(abs(best - g) <= t + 1e-12 for g, t in zip(golds, tolerances, strict=True))
    return hits / len(golds), best


def _spread(values: list[float]) -> dict:
    return {"n": len(values), "min": round(min(values), 6), "median": round(median(values), 6),
            "max": round(max(values), 6)} if values else {"n": 0}


def is_number(value: object) -> bool:
    """A JSON number (an int or float, not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def typed_spread(answers: list) -> dict:
    """Spread of non-numeric golds (coordinates, lists, categories, booleans).

    The most common answer's share is the best constant's (each is compared exactly or within a
    tolerance far smaller than the distance between two distinct golds).
    """
    canonical = Counter(json.dumps(a, sort_keys=True) for a in answers)
    constant, hits = canonical.most_common(1)[0]
    return {"kind": "hypothesis", "gold": {"n": len(answers), "distinct": len(canonical)},
            "best_constant": json.loads(constant), "best_constant_share": round(hits / len(answers), 6)}


def gold_spread(benchmark: Path, task_id: str) -> dict:
    """Spread of the gold (and of each reference model's values) across the task's kept queries."""
    private = task_dir(benchmark, task_id) / "private"
    records = json.loads((private / "queries.json").read_text())
    golds = [r["gold"] for r in records.values()]
    if "answer" in golds[0] and not all(is_number(g["answer"]) for g in golds):
        return typed_spread([g["answer"] for g in golds])
    if "answer" in golds[0]:
        values = [float(g["answer"]) for g in golds]
        default_tol = [max(0.0, r["tolerance"] or 0.0) for r in records.values()]
        share, constant = best_constant_share(values, default_tol)
        return {"kind": "hypothesis", "gold": _spread(values),
                "tolerance": _spread(default_tol), "best_constant": constant,
                "best_constant_share": round(share, 6)}
    spread: dict = {"kind": "metrics", "gold": {}, "references": {}}
    for name in golds[0]["metrics"]:
        spread["gold"][name] = _spread([g["metrics"][name] for g in golds])
    for query_id in records:
        for model, values in read_references(private / query_id).items():
            for name, value in values.items():
                if value is not None:
                    spread["references"].setdefault(model, {}).setdefault(name, []).append(value)
    spread["references"] = {m: {n: _spread(v) for n, v in by.items()}
                            for m, by in spread["references"].items()}
    return spread
