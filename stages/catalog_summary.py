"""What a built benchmark holds, counted the way ST-Bench reports its catalog (its §2 and App. C.4).

From `processed/benchmark`: tasks by category x domain, by difficulty and by each tag axis; queries
by split and by scope kind; and, given per-task scores, an agent's mean score per category and per
domain. Only public task properties are read (the built `task.yaml` of each kept task); no gold.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

from stages.built_benchmark import built_specs
from stages.catalog import STBENCH_CATEGORIES, TaskSpec

TAG_AXES = ("capability", "pipeline_stage", "cognitive_skill", "mas_challenge")


def _counts(values) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def catalog_summary(benchmark: Path) -> dict:
    """Counts of the built catalog: tasks by category x domain, difficulty, tags; queries by split."""
    specs = built_specs(benchmark)
    queries = pd.read_parquet(benchmark / "queries.parquet", columns=["task_id", "split", "scope_kind"])
    grid: dict[str, dict[str, int]] = {c: {} for c in STBENCH_CATEGORIES}
    for spec in specs.values():
        grid.setdefault(spec.category, {})
        grid[spec.category][spec.domain] = grid[spec.category].get(spec.domain, 0) + 1
    domain_of = {task_id: spec.domain for task_id, spec in specs.items()}
    return {
        "tasks": len(specs),
        "queries": len(queries),
        "tasks_by_domain": _counts(s.domain for s in specs.values()),
        "tasks_by_category_domain": {c: dict(sorted(d.items())) for c, d in grid.items()},
        "tasks_by_difficulty": _counts(s.difficulty for s in specs.values()),
        "tasks_by_tag": {axis: _counts(tag for s in specs.values() for tag in getattr(s.tags, axis))
                         for axis in TAG_AXES},
        "queries_by_split": _counts(queries["split"]),
        "queries_by_domain_split": {
            domain: _counts(group["split"])
            for domain, group in queries.assign(domain=queries["task_id"].map(domain_of)).groupby("domain")},
        "queries_by_scope_kind": _counts(queries["scope_kind"]),
        "categories_below_four_tasks": sorted(c for c, d in grid.items() if sum(d.values()) < 4),
    }


def scores_by(specs: dict[str, TaskSpec], scores: dict[str, float | None], field: str) -> dict[str, float]:
    """Mean task score per value of a task field (`category` or `domain`); a missing score is 0."""
    groups: dict[str, list[float]] = defaultdict(list)
    for task_id, score in scores.items():
        if task_id in specs:
            groups[getattr(specs[task_id], field)].append(score or 0.0)
    return {name: round(sum(values) / len(values), 6) for name, values in sorted(groups.items())}
