"""Screen a staged query before its annotator runs: drop what no gold could keep.

Aligning a query grades its reference models against its truth, without the annotator. A metric
that must beat those models (`MetricSpec.references`) and has a best possible value (the better end
of its `valid_range`: NSE and R² at most 1, an error at least 0) can be out of reach before any gold
exists: when even that best value does not beat a reference by the metric's margin, every gold
misses the task's own targets and verify would discard the query after a label run. Such a query is
discarded here, at stage `screen`, with the same reasons' words, and no annotator runs for it.

The screen only drops what is certain to be dropped later: a query it keeps may still be discarded
at label or verify, and a query it drops could not have been kept (the gold has to be a value in
the metric's valid range; `stages.scoring.query.checks` refuses anything outside it as unrealistic).
"""

from __future__ import annotations

from pathlib import Path

from stages.catalog import TaskSpec
from stages.construction.drawing import Discard, Query
from stages.scoring.query.checks import lower_is_better
from stages.scoring.query.references import read_references
from stages.scoring.query.scorer import GoldError, Grading, beats_references


def best_value(low: float | None, high: float | None, lower: bool) -> float | None:
    """The metric's best possible value: the better end of its valid range, or None when open."""
    return low if lower else high


def out_of_reach(task: TaskSpec, grading: Grading) -> str | None:
    """Why no gold can clear the task's targets on this query's references, or None."""
    for metric in task.answer.metrics or []:
        if not metric.references:
            continue
        lower = lower_is_better(metric)
        best = best_value(*metric.valid_range, lower)
        if best is None:
            continue
        try:
            reachable = beats_references(metric, best, grading)
        except GoldError as error:  # no named reference is defined: verify would say so, after a run
            return f"gold cannot be graded: {error}"
        if not reachable:
            refs = {name: grading.references.get(name, {}).get(metric.name) for name in metric.references}
            return (f"gold cannot clear the task's own targets: {metric.name}'s best possible value {best} "
                    f"does not beat the reference models ({refs}; margin {metric.margin})")
    return None


def screen(task: TaskSpec, queries: list[Query], task_dir: Path) -> tuple[list[Query], list[Discard]]:
    """The staged queries worth labelling, and a `screen` discard for each of the others."""
    if not any(metric.references for metric in task.answer.metrics or []):
        return queries, []
    kept, discards = [], []
    for query in queries:
        reason = out_of_reach(task, Grading(read_references(task_dir / "private" / query.query_id)))
        if reason is None:
            kept.append(query)
        else:
            discards.append(Discard(query.task_id, query.scope, "screen", reason, query.query_id))
    return kept, discards
