"""The report reads what the scoring suite writes: metrics made by its own functions, not by hand.

Per-query scores of three agents on the camels catalog's tasks go through `summarize` + `suite`
(as `score@<agent>` assembles them) and `compare` (as the `compare` stage does); the report must
load them and show the producer's numbers.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG
from scibench_testing.report import VALIDITY, VERSION

from stages.catalog import load_catalog
from stages.report.contents import report_tables
from stages.report.inputs import load_inputs
from stages.report.tables import cut_axes
from stages.scoring.aggregate.comparison import ScoredAgent, compare
from stages.scoring.aggregate.suite import COLUMNS, suite
from stages.scoring.aggregate.summary import summarize, task_scores
from stages.scoring.query.outcomes import Outcome
from stages.scoring.query.scorer import QueryScore

# Per agent: each task's query pass rates (0: unrealistic) and seconds per query.
AGENTS = {"good": ([1.0, 1.0, 0.5], 20.0), "fair": ([1.0, 0.0, 0.0], 5.0), "none": ([0.0, 0.0, 0.0], 1.0)}


def scored(specs: dict, passes: list[float], seconds: float) -> tuple[dict, dict, pd.DataFrame]:
    """What score@<agent> writes: (<agent>.json, <agent>.tasks.json's tasks, the per-query table)."""
    per_task, rows = {}, []
    for task_id in sorted(specs):
        for i, q in enumerate(passes):
            outcome = Outcome.ANSWERED if q > 0 else Outcome.UNREALISTIC
            per_task.setdefault(task_id, []).append(QueryScore(outcome, True, {}, q, q))
            rows.append({"task_id": task_id, "query_id": f"{task_id}-{i}", "outcome": outcome.value, "q": q,
                         "reward": q, "exec_ok": True, "wall_seconds": seconds, "agent_seconds": seconds,
                         "tokens": 100, "prompt_tokens": 80, "completion_tokens": 20, "cached_tokens": None,
                         "reasoning_tokens": None, "calls": 2, "cost_usd": 0.001, "attempts": 1,
                         "agent_limit": None, "usage_flags": 0, "model_reported": "m-1"})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    summary = summarize(per_task)
    summary.update(suite(frame, task_scores(summary), specs, 200, 0.95, 0))
    tasks = summary.pop("tasks")
    return summary | {"split": "test", "version": VERSION}, tasks, frame


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    specs = {task.spec.id: task.spec for task in load_catalog(CATALOG, ["camels"])}
    root = tmp_path_factory.mktemp("contract")
    metrics, reports = root / "metrics", root / "reports"
    metrics.mkdir()
    reports.mkdir()
    agents = {}
    for name, (passes, seconds) in AGENTS.items():
        summary, tasks, frame = scored(specs, passes, seconds)
        (metrics / f"{name}.json").write_text(json.dumps(summary | {"agent": name}))
        (metrics / f"{name}.tasks.json").write_text(json.dumps({"agent": name, "split": "test", "tasks": tasks}))
        agents[name] = ScoredAgent(summary, {t: e["score"] for t, e in tasks.items()}, frame)
    comparison = compare(agents, "fair", [], 200, 0, 0.95)
    (metrics / "compare.json").write_text(json.dumps({"split": "test", **comparison}))
    (reports / "validity.json").write_text(json.dumps(VALIDITY))
    return load_inputs(list(AGENTS), metrics, reports), comparison, specs


def test_the_report_shows_the_scoring_suites_numbers(produced):
    inputs, comparison, specs = produced
    tables = {table.key: table for table in report_tables(inputs)}
    scores = {row[0]: row[1] for row in tables["scores"].rows}
    ci = inputs.metrics["good"].score_ci
    assert scores["good"] == f"83.3 [{ci.low:.1f}, {ci.high:.1f}]" and ci.level == 0.95
    assert scores["none"] == "0.0 [0.0, 0.0]"
    assert tables["scores"].columns[1] == "score [95 % CI]"
    versus = {row[0]: row for row in tables["versus-baseline"].rows}
    assert versus["good"][2].startswith("+50.0 [") and versus["good"][3] == "4.00×"
    assert [row[-1] for row in tables["versus-baseline"].rows] == [
        "yes" if name in comparison["frontier"] else "" for name in ("good", "fair", "none")]
    filled, _ = cut_axes(inputs.metrics)
    assert filled[:3] == ["domain", "difficulty", "category"]
    assert {row[0] for row in tables["cut-domain"].rows} == {spec.domain for spec in specs.values()}
    usage = {row[0]: dict(zip(tables["usage"].columns, row, strict=True)) for row in tables["usage"].rows}
    queries = 3 * len(specs)
    assert usage["good"] | {"agent": "good"} == {
        "agent": "good", "tokens": f"{100 * queries:,}", "prompt tokens": f"{80 * queries:,}",
        "completion tokens": f"{20 * queries:,}", "cached tokens": "—", "reasoning tokens": "—",
        "cost (USD)": f"${0.001 * queries:.4f}", "wall (s)": f"{20.0 * queries:.1f}",
        "agent time (s)": f"{20.0 * queries:.1f}", "tokens / query": "100", "cost / query (USD)": "$0.0010",
        "wall / query (s)": "20.00", "parallelism": "1.00", "limits hit": "none", "model calls": str(2 * queries),
        "flagged queries": "0", "models reported": "m-1"}
