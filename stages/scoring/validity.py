"""DVC entry point `validity`: gate every task on what reference agents can score on it.

A task measures the analysis only if an agent that does not do it cannot pass. Per task, on the
evaluated split, this stage reads the scores of:
- the oracle (the annotator script run as an agent): must reach `oracle_min` (the gold is
  reproducible and clears the task's own targets);
- the floors: `fabricate` (plausible invented numbers and artifacts, never opens `data/`), `nodata`
  (answers from the prompt) and `defensive` (zeros and sentinels): at most `floor_max`;
- the reference-model agents (`climatology`, `linear_forcing`, `interpolate`, ...): each at most
  `reference_max`, clearly below the oracle;
- the candidates (the `heuristic` agent: a standard analysis per task family): the benchmark must
  tell an agent that does the analysis from one that hands in a baseline. On every task a
  candidate scores at least the best reference agent and at most the oracle (the oracle is the
  upper bound: a candidate above it means the gold is weaker than a standard method), and its
  overall score exceeds the best reference agent's overall by `candidate_margin` points.
For a hypothesis task, the golds of all its kept queries must vary: the best single constant
answer (the value matching the most golds within their tolerances) may match at most
`constant_max_share` of them, judged on a task with at least `constant_min_queries` kept queries
(on three, two neighbouring scopes that agree are a coincidence, not a constant gold). The report
(processed/reports/validity.json; its summary, for `dvc metrics show/diff`, in
processed/metrics/validity.json) also gives the gold spread, the reference values, the honesty
rate of every agent, the test/train overlap of the splits and where the data came from (synthetic
or real). A failed gate fails the stage, naming the task and the gate.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from statistics import median

import pandas as pd

from stages.catalog import TaskSpec
from stages.catalog_summary import built_specs, catalog_summary, scores_by
from stages.hashing import write_json
from stages.layout import BENCHMARK, METRICS, REPORTS, REPOSITORIES, task_dir
from stages.params import ValidityParams, load_params
from stages.provenance import ProvenanceError, provenance_summary
from stages.repository import read_manifest
from stages.scoring.query.references import read_references


class ValidityError(RuntimeError):
    """A task failed a validity gate; the message names the task and the gate."""


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


def _is_number(value: object) -> bool:
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
    if "answer" in golds[0] and not all(_is_number(g["answer"]) for g in golds):
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


def task_scores(metrics_dir: Path, agent: str) -> dict[str, dict]:
    """Task id -> the agent's task entry (score, honesty, ...) from `<agent>.tasks.json`."""
    path = metrics_dir / f"{agent}.tasks.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: run score@{agent} first (the validity suite needs it)")
    return json.loads(path.read_text())["tasks"]


def gate_failures(task_id: str, scores: dict[str, float | None], spread: dict,
                  settings: ValidityParams) -> list[str]:
    """Every gate the task fails, as messages naming the task, the gate and the numbers."""
    gates, failures = settings.gates, []
    oracle = scores.get(settings.oracle)
    if oracle is None or oracle < gates.oracle_min:
        failures.append(f"{task_id}: oracle scores {oracle}, the gate needs >= {gates.oracle_min}")
    for agent in settings.floors:
        if (scores.get(agent) or 0.0) > gates.floor_max:
            failures.append(f"{task_id}: {agent} scores {scores[agent]}, the gate allows "
                            f"<= {gates.floor_max}")
    for agent in settings.references:
        if (scores.get(agent) or 0.0) > gates.reference_max:
            failures.append(f"{task_id}: reference agent {agent} scores {scores[agent]}, the "
                            f"gate allows <= {gates.reference_max}")
    failures += candidate_task_failures(task_id, scores, settings)
    share = spread.get("best_constant_share")
    kept = spread.get("gold", {}).get("n")
    judged = kept is None or kept >= gates.constant_min_queries
    if share is not None and judged and share > gates.constant_max_share:
        constant = spread["best_constant"]
        shown = f"{constant:.4g}" if _is_number(constant) else json.dumps(constant)
        failures.append(f"{task_id}: golds are near-constant: the answer {shown} "
                        f"matches {share:.0%} of queries, the gate allows "
                        f"{gates.constant_max_share:.0%}")
    return failures


def best_reference(scores: dict[str, float | None], settings: ValidityParams) -> tuple[str | None, float]:
    """(name, score) of the best-scoring reference agent (a missing score counts as 0)."""
    ranked = [(scores.get(agent) or 0.0, agent) for agent in settings.references]
    score, agent = max(ranked, key=lambda item: item[0], default=(0.0, None))
    return agent, score


def candidate_task_failures(task_id: str, scores: dict[str, float | None],
                            settings: ValidityParams) -> list[str]:
    """A candidate below the best reference agent or above the oracle on one task."""
    failures = []
    reference, best = best_reference(scores, settings)
    oracle = scores.get(settings.oracle)
    for candidate in settings.candidates:
        score = scores.get(candidate) or 0.0
        if score < best:
            failures.append(f"{task_id}: candidate {candidate} scores {score}, below reference agent "
                            f"{reference} ({best}); the gate needs >= {best}")
        if oracle is not None and score > oracle:
            failures.append(f"{task_id}: candidate {candidate} scores {score}, above the oracle "
                            f"({oracle}); the gate needs <= {oracle}")
    return failures


def overall_failures(overall: dict[str, float], settings: ValidityParams) -> list[str]:
    """Each candidate whose overall score is not `candidate_margin` above every reference agent's."""
    reference, best = best_reference(overall, settings)
    margin, failures = settings.gates.candidate_margin, []
    for candidate in settings.candidates:
        if overall[candidate] < best + margin:
            failures.append(f"overall: candidate {candidate} scores {overall[candidate]}, the gate "
                            f"needs >= {best + margin:g} (reference agent {reference} {best} + "
                            f"margin {margin:g})")
    return failures


def provenance(domains: list[str]) -> dict:
    """Per domain: which sources are synthetic or real, and whether they are mixed."""
    out = {}
    for domain in domains:
        try:
            out[domain] = provenance_summary(read_manifest(REPOSITORIES / domain))
        except (ProvenanceError, FileNotFoundError) as error:
            out[domain] = {"error": str(error)}
    return out


def empty_task_failures(verification: dict) -> list[str]:
    """A task of the build that kept no query fails: it would otherwise vanish from the report."""
    failures = []
    for task_id, entry in sorted(verification["tasks"].items()):
        if task_id in verification["tasks_kept"]:
            continue
        stages = Counter(d["stage"] for d in entry["discarded"] if not d["reason"].startswith("query pool is full"))
        failures.append(f"{task_id}: no query was verified ({entry['queries_drawn']} tried; discarded at "
                        + ", ".join(f"{stage} {n}" for stage, n in sorted(stages.items()))
                        + "; reasons in processed/benchmark/verification.json)")
    return failures


def exact_match_rates(metrics_dir: Path, agents: list[str]) -> dict[str, float | None]:
    """Each agent's exact-match rate (%) over the split's hypothesis queries (None: there are none)."""
    rates = {}
    for agent in agents:
        entry = json.loads((metrics_dir / f"{agent}.json").read_text()).get("exact_match") or {}
        rate = entry.get("rate")
        rates[agent] = None if rate is None else round(100 * rate, 6)
    return rates


def hypothesis_failures(rates: dict[str, float | None], settings: ValidityParams) -> list[str]:
    """The no-data guessers above their bounds, or a candidate not above both, on hypothesis queries."""
    gates, failures = settings.hypothesis, []
    if rates.get(gates.nodata) is None:
        return []
    bounds = [(gates.nodata, gates.nodata_max)] + ([(gates.prior, gates.prior_max)] if gates.prior else [])
    for agent, bound in bounds:
        if rates[agent] > bound:
            failures.append(f"hypotheses: {agent} matches {rates[agent]:.1f} % of the gold answers, "
                            f"the gate allows <= {bound:g} %")
    ceiling = max(rates[agent] for agent, _ in bounds)
    for candidate in settings.candidates:
        if rates[candidate] <= ceiling:
            failures.append(f"hypotheses: candidate {candidate} matches {rates[candidate]:.1f} %, not "
                            f"above the no-data guessers ({ceiling:.1f} %)")
    return failures


def chance_level(spec: TaskSpec, n_entities: list[int]) -> float | None:
    """The share of queries a uniform guess matches.

    1/2 for a boolean, 1/k for k declared categories, the mean of 1/entities for a coordinate or an
    open category (one of the scope's cells or molecules); None for a continuous number.
    """
    hypothesis = spec.answer.hypothesis
    if hypothesis.format == "boolean":
        return 0.5
    if hypothesis.format == "category" and hypothesis.categories:
        return round(1 / len(hypothesis.categories), 6)
    if hypothesis.format in ("coordinates", "category") and n_entities:
        return round(sum(1 / n for n in n_entities) / len(n_entities), 6)
    return None


def validity_report(benchmark: Path, metrics_dir: Path, settings: ValidityParams,
                    domains: list[str]) -> dict:
    """The whole report: per task scores, gold spread, honesty, overlap; overall; failures."""
    guessers = [g for g in (settings.hypothesis.nodata, settings.hypothesis.prior) if g]
    agents = list(dict.fromkeys([settings.oracle, *settings.candidates, *settings.floors, *guessers,
                                 *settings.references]))
    by_agent = {agent: task_scores(metrics_dir, agent) for agent in agents}
    verification = json.loads((benchmark / "verification.json").read_text())
    tasks, failures = {}, empty_task_failures(verification)
    for task_id in sorted(verification["tasks_kept"]):
        scores = {a: by_agent[a].get(task_id, {}).get("score") for a in agents}
        spread = gold_spread(benchmark, task_id)
        failures += gate_failures(task_id, scores, spread, settings)
        tasks[task_id] = {
            "scores": scores,
            "honesty_rate": {a: by_agent[a].get(task_id, {}).get("honesty", {}).get("rate")
                             for a in agents},
            "gold_spread": spread,
            "split_overlap": verification["tasks"][task_id].get("split_overlap"),
        }
    overall = {a: round(sum(t["scores"][a] or 0.0 for t in tasks.values()) / max(len(tasks), 1), 6)
               for a in agents}
    failures += overall_failures(overall, settings)
    specs = built_specs(benchmark)
    rates = exact_match_rates(metrics_dir, agents)
    failures += hypothesis_failures(rates, settings)
    queries = pd.read_parquet(benchmark / "queries.parquet", columns=["task_id", "n_entities", "split"])
    for task_id, entry in tasks.items():
        if specs[task_id].answer.hypothesis is not None:
            sizes = queries.loc[queries["task_id"] == task_id, "n_entities"].tolist()
            entry["hypothesis"] = {"format": specs[task_id].answer.hypothesis.format,
                                   "chance_level": chance_level(specs[task_id], sizes)}
    per_agent = {a: {task_id: entry["scores"][a] for task_id, entry in tasks.items()} for a in agents}
    return {"agents": agents, "tasks": tasks, "overall": overall,
            "hypotheses": {"exact_match_percent": rates, "gates": settings.hypothesis.model_dump()},
            "by_category": {a: scores_by(specs, per_agent[a], "category") for a in agents},
            "by_domain": {a: scores_by(specs, per_agent[a], "domain") for a in agents},
            "catalog": catalog_summary(benchmark),
            "gates": settings.gates.model_dump(), "provenance": provenance(domains),
            "failures": failures, "passed": not failures}


def summary_metrics(report: dict) -> dict:
    """The few numbers `dvc metrics show/diff` compare: gates passed, overall score per agent."""
    return {"passed": report["passed"], "failures": len(report["failures"]),
            "overall": report["overall"],
            "honesty_rate": {agent: _mean_rate(report, agent) for agent in report["agents"]}}


def _mean_rate(report: dict, agent: str) -> float | None:
    rates = [t["honesty_rate"][agent] for t in report["tasks"].values()
             if t["honesty_rate"][agent] is not None]
    return round(sum(rates) / len(rates), 6) if rates else None


def table(report: dict) -> str:
    """The validity table as text: one row per task, one column per agent, then overall."""
    agents = report["agents"]
    short = {a: a[:10] for a in agents}
    width = max([34, *(len(task_id) + 2 for task_id in report["tasks"])])
    lines = [f"{'task':{width}}" + "".join(f"{short[a]:>11}" for a in agents) + "  best-const"]
    for task_id, entry in report["tasks"].items():
        scores = entry["scores"]
        share = entry["gold_spread"].get("best_constant_share")
        lines.append(f"{task_id:{width}}" + "".join(f"{(scores[a] or 0.0):>11.1f}" for a in agents)
                     + (f"  {share:>9.0%}" if share is not None else f"  {'-':>9}"))
    lines.append(f"{'overall':{width}}" + "".join(f"{report['overall'][a]:>11.1f}" for a in agents))
    for cut in ("by_domain", "by_category"):
        groups = sorted({g for a in agents for g in report.get(cut, {}).get(a, {})})
        for group in groups:
            lines.append(f"{'  ' + group:{width}}" + "".join(
                f"{report[cut][a].get(group, 0.0):>11.1f}" for a in agents))
    for domain, entry in report["provenance"].items():
        origins = ", ".join(f"{s} ({o})" for s, o in entry.get("origins", {}).items())
        lines.append(f"data of {domain}: {origins or entry.get('error')}"
                     + ("  WARNING: real and synthetic sources are mixed" if entry.get("mixed") else ""))
    lines.append("gates: " + ("all passed" if report["passed"] else "FAILED"))
    lines += [f"  {failure}" for failure in report["failures"]]
    return "\n".join(lines)


def main() -> None:
    """Write the report and its summary metrics, print the table; exit 1 when a gate fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="print the last report, run nothing")
    args = parser.parse_args()
    path = REPORTS / "validity.json"
    if args.show:
        print(table(json.loads(path.read_text())))
        return
    params = load_params()
    report = validity_report(BENCHMARK, METRICS, params.validity, params.construct.domains)
    write_json(path, report)
    write_json(METRICS / "validity.json", summary_metrics(report))
    print(table(report))
    if not report["passed"]:
        print(f"validity: {len(report['failures'])} gate(s) failed (see above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
