"""Repeated runs (`evaluate.epochs`): one score per epoch, their mean with its standard error, pass@k.

Each epoch is scored by the one formula (`summarize`); the agent's score is the mean of its epochs'
scores and a task's score the mean of its epochs' scores of it. The standard error is the epochs'
sample standard deviation over the square root of their number (none for one epoch), the spread
their range. Outcome counts and rates are pooled over every run of every query.

pass@k (hypothesis tasks): the chance that at least one of k runs of a query, drawn from its n scored
runs of which c were right (q = 1), is right: 1 - C(n-c, k) / C(n, k), the unbiased estimator of
Chen et al. (2021, arXiv:2107.03374), averaged over the task's queries that have at least k scored runs.
"""

from __future__ import annotations

import math
from statistics import mean, stdev

import pandas as pd

from stages.scoring.aggregate.summary import summarize
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.scorer import QueryScore

DIGITS = 6


def summarize_epochs(per_epoch: list[dict[str, list[QueryScore]]]) -> dict:
    """`summarize` over several epochs of the same queries (task id -> scores, one dict per epoch).

    With one epoch: `summarize`'s result and an `epochs` block. With more: outcomes and rates pooled
    over every run, `score` and each task's `score` the mean over epochs, and each task's
    `epoch_scores`.
    """
    summaries = [summarize(per_task) for per_task in per_epoch]
    scores = [summary["score"] for summary in summaries]
    if len(per_epoch) == 1:
        return summaries[0] | {"epochs": epochs_block(scores)}
    pooled = summarize({task_id: [score for per_task in per_epoch for score in per_task[task_id]]
                        for task_id in per_epoch[0]})
    for task_id, entry in pooled["tasks"].items():
        by_epoch = [summary["tasks"][task_id]["score"] for summary in summaries]
        known = [score for score in by_epoch if score is not None]
        entry.update(score=round(mean(known), DIGITS) if known else None, epoch_scores=by_epoch,
                     n_queries=summaries[0]["tasks"][task_id]["n_queries"])
    known = [score for score in scores if score is not None]
    return pooled | {"score": round(mean(known), DIGITS) if known else None,
                     "n_queries": summaries[0]["n_queries"], "n_runs": pooled["n_queries"],
                     "epochs": epochs_block(scores)}


def epochs_block(scores: list[float | None]) -> dict:
    """The epochs' scores, their standard error (None for fewer than two) and spread (max - min)."""
    known = [score for score in scores if score is not None]
    return {"n": len(scores), "scores": scores,
            "se": round(stdev(known) / math.sqrt(len(known)), DIGITS) if len(known) > 1 else None,
            "spread": round(max(known) - min(known), DIGITS) if known else None}


def pass_at_k(frame: pd.DataFrame, hypothesis_tasks: set[str]) -> dict[str, dict[str, float]]:
    """Task id -> {k: pass@k} for k = 1 .. the most scored runs of a query (`frame`: per run, `epoch` column)."""
    runs = frame[frame["task_id"].isin(hypothesis_tasks) & (frame["outcome"] != Outcome.INFRA_ERROR.value)]
    result = {}
    for task_id, group in runs.groupby("task_id", sort=True):
        counts = group.groupby("query_id", sort=True)["q"].agg(n="size", c=lambda q: int((q >= 1.0).sum()))
        most = int(counts["n"].max())
        result[task_id] = {str(k): round(mean(estimate(n, c, k) for n, c in counts.itertuples(index=False)
                                              if n >= k), DIGITS) for k in range(1, most + 1)}
    return result


def estimate(n: int, c: int, k: int) -> float:
    """pass@k of one query with c right runs out of n."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)
