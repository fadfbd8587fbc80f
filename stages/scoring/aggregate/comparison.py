"""Compare agents scored on one split: ST-Bench's system metrics against a baseline agent (SA).

- `win_rate`: share of tasks scored for both where the agent's task score beats the baseline's.
- `delta_perf`: mean over those tasks of (score_M - score_SA), in points, with a paired bootstrap
  interval over the queries both were scored on (`intervals.paired_delta`).
- `rho_time`, `rho_token`: mean over shared scored queries of the per-query cost ratio M / SA
  (wall seconds; tokens). A query whose baseline cost is 0 has no ratio and is skipped; when no
  query has one the ratio is None (agents that use no tokens have no token ratio).
- `eta_time`, `eta_token`: `delta_perf / max(rho - 1, 0.1)` (ST-Bench efficiency).
- `frontier`: agents no other agent beats on both rho_time (lower) and delta_perf (higher).
- `parallelism`: summed query wall time / summed agent time (1.0 when the agent works serially).
- `generalizability`: gen = mean over tasks (score_task-trained - score_category-trained).

`load_scored` reads what `score@<agent>` wrote for one agent (`processed/metrics/<agent>.json`,
`<agent>.tasks.json`, `processed/scores/<agent>.parquet`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.layout import METRICS, SCORES
from stages.scoring.aggregate.intervals import paired_delta
from stages.scoring.aggregate.summary import delta_perf, efficiency, task_scores, win_rate
from stages.scoring.query.outcomes import Outcome

DIGITS = 6


@dataclass(frozen=True)
class ScoredAgent:
    """What `compare` reads of one agent: its summary, per-task scores and per-query table."""

    summary: dict
    tasks: dict[str, float | None]
    queries: pd.DataFrame

    def scored(self) -> pd.DataFrame:
        """The scored (not infra-error) queries, one row each.

        A query run in several epochs has the mean of its scored runs' numbers.
        """
        scored = self.queries[self.queries["outcome"] != Outcome.INFRA_ERROR.value]
        if "epoch" not in scored.columns or not scored["epoch"].any():
            return scored
        numbers = scored.select_dtypes("number").columns.drop("epoch")
        return scored.groupby(["task_id", "query_id"], sort=True, as_index=False)[list(numbers)].mean()

    def q_values(self) -> dict[str, dict[str, float]]:
        """Task id -> query id -> q of the scored queries."""
        frame = self.scored()
        return {task: dict(zip(group["query_id"], group["q"], strict=True))
                for task, group in frame.groupby("task_id", sort=True)}


def load_scored(name: str, metrics: Path = METRICS, scores: Path = SCORES) -> ScoredAgent:
    """One agent's scoring outputs; a missing file names the stage that writes it."""
    paths = [metrics / f"{name}.json", metrics / f"{name}.tasks.json", scores / f"{name}.parquet"]
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise FileNotFoundError(f"compare: {', '.join(missing)} missing; run `dvc repro score@{name}`")
    summary = json.loads(paths[0].read_text())
    tasks = json.loads(paths[1].read_text())
    return ScoredAgent(summary, task_scores(tasks), pd.read_parquet(paths[2]))


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def cost_ratio(agent: ScoredAgent, baseline: ScoredAgent, column: str) -> float | None:
    """Mean per-query ratio agent / baseline of one cost column over shared scored queries."""
    shared = agent.scored().merge(baseline.scored(), on=["task_id", "query_id"], suffixes=("", "_sa"))
    shared = shared[shared[f"{column}_sa"] > 0]
    if shared.empty:
        return None
    return float((shared[column] / shared[f"{column}_sa"]).mean())


def per_query(agent: ScoredAgent, column: str) -> float | None:
    """Mean of one cost column per query of the split (infra errors included: they were paid)."""
    frame = agent.queries
    if not len(frame) or frame[column].isna().any():  # an unknown cost makes the mean unknown
        return None
    return _round(frame[column].mean())


def parallelism(agent: ScoredAgent) -> float | None:
    """Summed wall time / summed agent time over the split's queries."""
    frame = agent.queries
    total = float(frame["agent_seconds"].sum())
    return _round(float(frame["wall_seconds"].sum()) / total) if total > 0 else None


def agent_entry(agent: ScoredAgent) -> dict:
    """The per-agent row of compare.json."""
    summary = agent.summary
    return {
        "score": summary["score"], "score_ci": summary.get("score_ci"),
        "outcomes": summary["outcomes"], "realistic_rate": summary["realistic_rate"],
        "pass_rate_given_realistic": summary["pass_rate_given_realistic"],
        "wall_seconds_per_query": per_query(agent, "wall_seconds"),
        "tokens_per_query": per_query(agent, "tokens"),
        "cost_usd_per_query": per_query(agent, "cost_usd"),
        "parallelism": parallelism(agent),
    }


def versus(agent: ScoredAgent, baseline: ScoredAgent, resamples: int, seed: int, level: float) -> dict:
    """ST-Bench system metrics of one agent against the baseline."""
    delta = delta_perf(agent.tasks, baseline.tasks)
    ci = paired_delta(agent.q_values(), baseline.q_values(), resamples, seed, level)
    rho_time = cost_ratio(agent, baseline, "wall_seconds")
    rho_token = cost_ratio(agent, baseline, "tokens")
    return {
        "win_rate": _round(win_rate(agent.tasks, baseline.tasks)),
        "delta_perf": _round(delta),
        "delta_ci": ci.as_dict() if ci else None,
        "rho_time": _round(rho_time),
        "rho_token": _round(rho_token),
        "eta_time": _round(efficiency(delta, rho_time)) if rho_time is not None else None,
        "eta_token": _round(efficiency(delta, rho_token)) if rho_token is not None else None,
    }


def frontier(points: Mapping[str, tuple[float | None, float | None]]) -> list[str]:
    """Names of the points (rho_time, delta_perf) no other point beats on both (ties allowed)."""
    valid = {name: p for name, p in points.items() if p[0] is not None and p[1] is not None}
    kept = []
    for name, (rho, delta) in sorted(valid.items()):
        dominated = any(
            other != name and o_rho <= rho and o_delta >= delta and (o_rho < rho or o_delta > delta)
            for other, (o_rho, o_delta) in valid.items()
        )
        if not dominated:
            kept.append(name)
    return kept


def generalizability(agents: Mapping[str, ScoredAgent], pairs: list[tuple[str, str]]) -> list[dict]:
    """ST-Bench gen for each (task-trained, category-trained) pair of configurations."""
    return [{"task_trained": task, "category_trained": category,
             "gen": _round(delta_perf(agents[task].tasks, agents[category].tasks))}
            for task, category in pairs]


def compare(agents: Mapping[str, ScoredAgent], baseline: str | None, pairs: list[tuple[str, str]],
            resamples: int, seed: int, level: float) -> dict:
    """The content of compare.json (without the split, which the caller adds)."""
    result = {"baseline": baseline,
              "agents": {name: agent_entry(agents[name]) for name in sorted(agents)},
              "versus_baseline": {}, "frontier": [],
              "generalizability": generalizability(agents, pairs)}
    if baseline is None:
        return result
    versus_all = {name: versus(agents[name], agents[baseline], resamples, seed, level)
                  for name in sorted(agents)}
    result["versus_baseline"] = versus_all
    result["frontier"] = frontier({name: (v["rho_time"], v["delta_perf"]) for name, v in versus_all.items()})
    return result

