"""A hand-made one-query benchmark for LLM agents, and one query of it run as the harness runs it.

The task: report the mean of `x` in `data/x.csv` (values 1..4, so the gold is 2.5) as
`{"answer": <number>}`. `run_llm_query` builds it, configures an `llm` agent against a scripted
server and runs `stages.evaluation.harness.evaluate_query` in the real sandbox; `score` grades the record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml
from scibench_testing.limits import limits_with
from scibench_testing.project import ROOT
from scibench_testing.scripted_llm import Turn

from benchmarks.runs import number_task, write_benchmark
from stages.catalog import TaskSpec
from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.harness import evaluate_query
from stages.evaluation.journal import JournalRecord
from stages.params import AgentParams, PriceTable
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.scorer import QueryScore, score_query

API_KEY = "sk-scibench-test-0123456789abcdef"
KEY_ENV = "SCIBENCH_TEST_LLM_KEY"
MODEL = "scripted-model"
GOLD = 2.5
TASK = number_task("mean-x", domain="camels", prompt="Report the mean of x in data/x.csv.",
                   description="the mean of x")
PROMPT = """# mean-x

Report the mean of x in data/x.csv.

## Answer format

Write work/answer.json as {"answer": <number>}.
"""
# What a scripted model's code does: compute the mean and hand it in.
MEAN_CODE = """import json
xs = [float(v) for v in open("data/x.csv").read().split()[1:]]
json.dump({"answer": sum(xs) / len(xs)}, open("work/answer.json", "w"))
print("mean", sum(xs) / len(xs))
"""
FAILING_CODE = "import json\nraise SystemExit(open('data/missing.csv').read())\n"


def python(code: str) -> Turn:
    """The model's turn that runs `code` with the `python` tool."""
    return Turn(tool_calls=[("python", json.dumps({"code": code}))])


SUBMIT = Turn(tool_calls=[("submit", "{}")])


def tiny_benchmark(root: Path, queries: int = 1, prompt: str = PROMPT) -> tuple[Path, list[dict]]:
    """The benchmark folder and its query rows (one task, `queries` test queries)."""
    rows = [{"query_id": f"q{number:03d}", "task_id": "mean-x", "scope": f"s{number}",
             "prompt": prompt.replace("# mean-x", f"# mean-x\n\nQUERY {number}"),
             "files": {"x.csv": "x\n1\n2\n3\n4\n"}} for number in range(queries)]
    return root / "benchmark", write_benchmark(root / "benchmark", {"mean-x": TASK}, rows, benchmark_id="tiny-llm")


def llm_options(base_url: str, **changes) -> dict:
    """Options of an `llm` agent against `base_url`, with fast retries and small bounds for tests."""
    options = {"strategy": "react", "model": MODEL, "base_url": base_url, "api_key_env": KEY_ENV,
               "generation": {"temperature": 0, "max_tokens": 512, "seed": 0}, "max_turns": 8,
               "max_rounds": 3, "token_budget": 100_000, "wall_budget_s": 50, "code_timeout_s": 20,
               "per_call_timeout_s": 10, "max_retries": 2, "retry_backoff_s": 0.05, "retry_backoff_max_s": 0.2}
    return options | changes


@dataclass(frozen=True)
class Ran:
    """The record of one query and its score."""

    record: JournalRecord
    score: QueryScore


def run_llm_query(tmp_path: Path, options: dict, infra_retries: int = 0,
                  prices: PriceTable | None = None, wall_seconds: float = 60, kind: str = "llm") -> Ran:
    """Run the tiny query once for an agent of `kind` (an `llm` agent by default), as `flows.evaluate` would."""
    benchmark, rows = tiny_benchmark(tmp_path)
    agent = setup_agent("llm-test", AgentParams(kind=kind, options=options), prices=prices)
    record = evaluate_query(rows[0], agent, benchmark, "tiny-llm", limits_with(wall_seconds=wall_seconds),
                            [ROOT], infra_retries, artifacts=tmp_path / "artifacts")
    return Ran(record, score(record))


def score(record: JournalRecord) -> QueryScore:
    """The record graded against the gold, as the score stage does."""
    spec = TaskSpec.model_validate(yaml.safe_load(TASK))
    execution = Execution(record.exit_code, record.timed_out, record.infra_error, record.answer_text,
                          record.answer_problem)
    return score_query(spec.answer, execution, {"answer": GOLD})

