"""Prefect flow: run one agent on one split, appending every finished query to its journal.

Run by DVC as `python -m flows.evaluate <agent>`. A killed run resumes: finished keys are skipped.

Queries run as Prefect tasks on a bounded pool: threads on this machine (`evaluate.concurrency`, or
the agent's own `concurrency` for I/O-bound agents such as LLM agents), or the workers of an
existing Dask cluster (`evaluate.dask_address`, through prefect-dask's `DaskTaskRunner`). Each task
returns its record and the flow appends it as it completes, so one process owns the journal
whatever runs the queries, and a kill loses at most the queries still in flight. With
`evaluate.query_task_runs: false` the flow runs the queries on threads of its own, without a task
run each, and shows its progress as a progress artifact (the Prefect server's bookkeeping of a
task run costs about as much CPU as the harness's own work on a query of an LLM agent).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import as_completed as futures_completed
from pathlib import Path

from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.utilities.annotations import quote

from flows.prefect_api import prefect_api, publish, run_flow
from flows.progress import Progress
from flows.runners import task_runner
from stages.built_benchmark import benchmark_id, load_split
from stages.evaluation.agents import PREPARE
from stages.evaluation.agents.identity import AgentSetup, agent_epochs, setup_agent
from stages.evaluation.harness import evaluate_query, pending_queries
from stages.evaluation.journal import Journal, JournalRecord
from stages.layout import BENCHMARK, RUNS, journal_path
from stages.params import AgentParams, EvaluateParams, PriceTable, load_params
from stages.sandbox import debris
from stages.skipped import clear_skipped, write_skipped


# refresh_cache=False: never cached anyway, and it spares each run a lookup of Prefect's settings
# that cost the flow process as much CPU as the rest of starting the task run.
@task(name="run query", task_run_name="{agent.name} on {query[task_id]} {query[scope]} epoch {query[epoch]}",
      cache_policy=NO_CACHE, refresh_cache=False)
def run_one(query: dict, agent: AgentSetup, bench_id: str, limits, hidden, retries: int,
            root: Path, unsafe: bool) -> JournalRecord:
    """Run one query in the sandbox; the record comes back to the flow, which journals it."""
    return evaluate_query(query, agent, root / BENCHMARK, bench_id, limits, hidden, retries, unsafe,
                          artifacts=root / RUNS / agent.name / "artifacts")


def as_task_runs(queries: list[dict], shared: dict) -> Iterator[JournalRecord]:
    """Each query a Prefect task run on the flow's task runner; records as they finish."""
    # quote(): Prefect would otherwise walk every parameter of every task run looking for futures
    # to wait on (a fifth of the harness's CPU per query of an llm agent); none of these holds one.
    futures = run_one.map([quote(query) for query in queries],
                          **{name: unmapped(quote(value)) for name, value in shared.items()})
    for future in as_completed(futures):
        yield future.result()


def on_threads(queries: list[dict], shared: dict, concurrency: int, progress: Progress) -> Iterator[JournalRecord]:
    """The queries on `concurrency` threads of the flow's own, no task run each; records as they finish.

    Stopped (a signal, an error), it starts no query it has not started yet.
    """
    pool = ThreadPoolExecutor(concurrency, thread_name_prefix="query")
    try:
        futures = [pool.submit(run_one.fn, query, **shared) for query in queries]
        for future in futures_completed(futures):
            yield future.result()
            progress.advance()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def artifact_key(text: str) -> str:
    """An artifact key Prefect accepts: lowercase letters, digits and dashes."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower())


def run_summary(split: str, n_queries: int, records: list[JournalRecord], epochs: int = 1) -> dict:
    """What this run did on its split: queries, run now, already journaled, infra errors, limits.

    With `epochs` > 1 every query runs that many times: `ran` and `already_done` count runs.

    `reused`: per origin, the records graded on an earlier run's hand-in instead of a run of their own.
    """
    limits = Counter(limit for record in records for limit in record.limits_hit)
    reused = Counter(record.reused_from for record in records if record.reused_from is not None)
    return {"split": split, "queries": n_queries, "epochs": epochs, "ran": len(records),
            "already_done": n_queries * epochs - len(records),
            "infra_errors": sum(record.infra_error is not None for record in records),
            "infra_retries": sum(record.attempts - 1 for record in records),
            "limits_hit": dict(sorted(limits.items())), "reused": dict(sorted(reused.items()))}


def run_table(records: list[JournalRecord]) -> list[dict]:
    """Per task: what this run did (the table artifact the Prefect UI shows for the flow run)."""
    by_task: dict[str, list[JournalRecord]] = {}
    for record in records:
        by_task.setdefault(record.task_id, []).append(record)
    rows = []
    for task_id in sorted(by_task):
        group = by_task[task_id]
        walls = sorted(record.wall_seconds for record in group)
        rows.append({
            "task": task_id, "ran": len(group),
            "exit 0": sum(record.exit_code == 0 for record in group),
            "answer.json": sum(record.answer_text is not None for record in group),
            "timeouts": sum(record.timed_out for record in group),
            "infra errors": sum(record.infra_error is not None for record in group),
            "median wall s": round(walls[len(walls) // 2], 2),
        })
    return rows


def publish_run(agent: str, split: str, records: list[JournalRecord], summary: dict) -> None:
    """The run's per-task table and summary line as a Prefect artifact of this flow run (best effort)."""
    from prefect.artifacts import create_table_artifact

    key = artifact_key(f"evaluate-{agent}-{split}")
    publish(f"the artifact {key!r}", create_table_artifact, key=key, description=describe(agent, summary),
            table=run_table(records) or [{"task": "(nothing left to run)", "ran": 0}])


@flow(name="evaluate", flow_run_name="evaluate {agent_name} on {split}")
def evaluate(agent_name: str, split: str, settings: EvaluateParams, configured: AgentParams,
             prices: PriceTable | None = None, unsafe_no_sandbox: bool = False) -> dict:
    """Run every pending query of `split` for one configured agent (params.yaml `evaluate`, `agents`, `prices`)."""
    debris.start_harness()  # after Prefect's own SIGTERM handler: ours cleans up, then calls it
    agent = setup_agent(agent_name, configured, prices=prices)
    PREPARE.get(configured.kind, lambda: None)()  # done already (a no-op) when run by main()
    root = Path.cwd().resolve()
    journal = Journal(journal_path(root / RUNS, agent_name))
    done = {k for k, r in journal.latest().items() if r.infra_error is None}
    split_queries = load_split(root / BENCHMARK, split)
    epochs = agent_epochs(configured, settings)
    queries = pending_queries(split_queries, agent, done, epochs)
    shared = {"agent": agent, "bench_id": benchmark_id(root / BENCHMARK), "limits": settings.limits.to_limits(),
              "hidden": [root], "retries": settings.infra_retries, "root": root, "unsafe": unsafe_no_sandbox}
    if settings.query_task_runs:
        finished = as_task_runs(queries, shared)
    else:
        finished = on_threads(queries, shared, configured.concurrency or settings.concurrency,
                              Progress(artifact_key(f"evaluate-{agent_name}-{split}-progress"), len(queries),
                                       f"evaluate@{agent_name} on {split}"))
    records = []
    for record in finished:
        journal.append(record)
        records.append(record)
    summary = run_summary(split, len(split_queries), records, epochs)
    publish_run(agent_name, split, records, summary)
    return summary


def describe(agent: str, summary: dict) -> str:
    """One line a person reads at the end of a run."""
    epochs = summary.get("epochs", 1)
    runs = f" x {epochs} epochs" if epochs > 1 else ""
    line = (f"evaluate@{agent} on {summary['split']}: {summary['queries']} queries{runs}, ran {summary['ran']}, "
            f"{summary['already_done']} already in the journal")
    if summary["infra_errors"] or summary["infra_retries"]:
        line += (f"; {summary['infra_errors']} infra errors left after {summary['infra_retries']} "
                 "retries (never scored; rerun to retry)")
    if summary["limits_hit"]:
        line += f"; limits hit {summary['limits_hit']}"
    for origin, count in summary["reused"].items():
        line += f"; {count} of them graded on the hand-in of the {origin}, not run again"
    return line


def main() -> None:
    """DVC entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent")
    parser.add_argument("--split", default=None, help="train, val or test (default: params)")
    parser.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run agents without bubblewrap (logged; only for trusted agents)")
    args = parser.parse_args()
    params = load_params()
    if args.agent not in params.agents:
        parser.error(f"agent {args.agent!r} is not configured in params.yaml agents")
    if args.agent in params.optimize.runs and (reason := params.optimize.skipped()) is not None:
        print(f"evaluate@{args.agent}: skipped: {reason}")  # processed/runs/<agent>/ holds the reason
        write_skipped(RUNS / args.agent, reason)
        return
    clear_skipped(RUNS / args.agent)
    settings, configured = params.evaluate, params.agents[args.agent]
    runner = task_runner(settings.dask_address, configured.concurrency or settings.concurrency)
    PREPARE.get(configured.kind, lambda: None)()  # the agent's libraries load before the flow run's clock starts
    with prefect_api():
        summary = run_flow(evaluate.with_options(task_runner=runner), args.agent, args.split or settings.split,
                           settings, configured, params.prices, args.unsafe_no_sandbox)
        print(describe(args.agent, summary))


if __name__ == "__main__":
    main()
