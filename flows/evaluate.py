"""Prefect flow: run one agent on one split, appending every finished query to its journal.

Run by DVC as `python -m flows.evaluate <agent>`. A killed run resumes: finished keys are skipped.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from stages.evaluate import (
    AgentSetup,
    benchmark_id,
    evaluate_query,
    load_split,
    pending_queries,
    setup_agent,
)
from stages.journal import Journal
from stages.layout import BENCHMARK, RUNS, journal_path
from stages.params import load_params
from stages.runner import sandbox_limits


@task(name="run query", task_run_name="{agent.name} on {query[task_id]} {query[scope]}",
      cache_policy=NO_CACHE)
def run_one(query: dict, agent: AgentSetup, bench_id: str, limits, hidden, retries: int,
            journal: Journal, unsafe: bool) -> str:
    """Run one query in the sandbox and append its record; returns the outcome-relevant status."""
    record = evaluate_query(query, agent, BENCHMARK, bench_id, limits, hidden, retries, unsafe,
                            artifacts=RUNS / agent.name / "artifacts")
    journal.append(record)
    return "infra_error" if record.infra_error else "done"


@flow(name="evaluate", flow_run_name="evaluate {agent_name} on {split}")
def evaluate(agent_name: str, split: str, unsafe_no_sandbox: bool = False) -> dict:
    """Run every pending query of `split` for one configured agent."""
    params = load_params()
    settings = params.evaluate
    agent = setup_agent(agent_name, params.agents[agent_name])
    journal = Journal(journal_path(RUNS, agent_name))
    done = {k for k, r in journal.latest().items() if r.infra_error is None}
    split_queries = load_split(BENCHMARK, split)
    queries = pending_queries(split_queries, agent, done)
    statuses = run_one.map(
        queries, agent=unmapped(agent), bench_id=unmapped(benchmark_id(BENCHMARK)),
        limits=unmapped(sandbox_limits(settings.limits)), hidden=unmapped([Path.cwd().resolve()]),
        retries=unmapped(settings.infra_retries), journal=unmapped(journal),
        unsafe=unmapped(unsafe_no_sandbox),
    ).result()
    skipped = len(split_queries) - len(queries)  # this split's queries already in the journal
    return {"ran": len(statuses), "skipped": skipped, "infra_errors": statuses.count("infra_error")}


def main() -> None:
    """DVC entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent")
    parser.add_argument("--split", default=None, help="train, val or test (default: params)")
    parser.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run agents without bubblewrap (logged; only for trusted agents)")
    args = parser.parse_args()
    settings = load_params().evaluate
    split = args.split or settings.split
    runner = ThreadPoolTaskRunner(max_workers=settings.concurrency)
    summary = evaluate.with_options(task_runner=runner)(args.agent, split, args.unsafe_no_sandbox)
    print(f"evaluate@{args.agent} on {split}: {summary}")


if __name__ == "__main__":
    main()
