"""Try one catalog task end to end, outside DVC and Prefect: the task writer's dev loop.

    python -m stages.construction.trial <task-id> [--queries N] [--agents heuristic,fabricate]

Draws the task's queries from its built repository, stages them, labels and verifies them with the
annotator script (as the construct flow does), then runs each named agent on every kept query in
the sandbox and grades it like `score@<agent>`. Prints, per query, the scope, the gold metrics, the
reference models' metrics and each agent's outcome; discarded queries with the reason. Nothing
under `processed/` is written: the mini benchmark lives in `--out` (default /tmp/trial/<task-id>).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from stages.catalog import load_catalog
from stages.catalog_scopes import read_prompt_block
from stages.construction import annotate, drawing, staging
from stages.evaluation.agents import AGENTS
from stages.evaluation.harness import run_attempt
from stages.evaluation.program import QueryContext
from stages.layout import CATALOG, REPOSITORIES, task_dir
from stages.params import load_params
from stages.repository import read_manifest, read_table
from stages.scoring.query.attribution import attribute
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.recompute import recompute
from stages.scoring.query.scorer import score_query

FLOORS_AND_CANDIDATE = "heuristic,fabricate,nodata,defensive"


def draw(task, limit: int):
    """The task's queries (near-duplicates dropped) and the discards, as the construct flow draws them."""
    repository = REPOSITORIES / task.spec.data.repository
    key = read_manifest(repository)["entity_key"]
    from stages.catalog import load_scopes
    scopes = load_scopes(CATALOG / task.spec.domain)
    queries, discards = drawing.draw_queries(task, scopes, read_table(repository, "entities"), key,
                                             drawing.repository_span(repository), limit)
    queries, duplicates = drawing.drop_near_duplicates(queries, load_params().construct.max_jaccard)
    return queries, discards + duplicates, key


def build(task, queries, key: str, folder: Path, limits, hidden) -> tuple[dict, list, dict]:
    """Stage, label and verify; returns (labels of kept queries, discards, annotator seconds)."""
    tables = drawing.extract_tables(task, REPOSITORIES / task.spec.data.repository)
    staging.stage_task(task, folder)
    queries, unstaged = staging.stage_queries(task, tables, key, queries, folder)

    def one(query):
        started = time.monotonic()
        label, discard = annotate.label_query(task.spec, query, folder, limits, hidden, key)
        seconds = time.monotonic() - started
        if discard is None:
            discard = annotate.verify_query(task.spec, query, label, folder, limits, hidden, 1e-6, key)
        return query, label, discard, seconds

    labels, discards, seconds = {}, list(unstaged), {}
    with ThreadPoolExecutor(2) as pool:
        for query, label, discard, took in pool.map(one, queries):
            seconds[query.query_id] = took
            if discard is None:
                labels[query.query_id] = label
            else:
                discards.append(discard)
    records = {q.query_id: {"gold": labels[q.query_id].gold, "tolerance": labels[q.query_id].tolerance,
                            "checkpoints": labels[q.query_id].checkpoints}
               for q in queries if q.query_id in labels}
    (folder / "private" / "queries.json").write_text(json.dumps(records, indent=2, sort_keys=True))
    return labels, discards, seconds


def run_agent(name: str, task, query, folder: Path, label, limits, hidden) -> str:
    """Run one agent on one query and grade it: outcome, checks passed, values, error class, time."""
    gold = label.gold
    params = load_params()
    agent = params.agents[name]
    context = QueryContext(query.query_id, task.spec.id, folder / "private", None)
    program = AGENTS[agent.kind](agent.options, context)
    collect = (task.spec.artifact.file,) if task.spec.artifact is not None else ()
    collect += tuple(c.file for c in task.spec.checkpoints)
    attempt, _ = run_attempt(query.prompt, folder / "public" / query.query_id, program, limits,
                             hidden, False, collect=collect)
    execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error,
                          attempt.answer_text, attempt.answer_problem)
    if task.spec.artifact is not None:
        collected = attempt.files.get(task.spec.artifact.file)
        data = collected.data if collected is not None else None
        problem = collected.problem if collected is not None else "no artifact"
        private = folder / "private" / query.query_id
        execution = recompute(task.spec, execution, data, problem,
                              pd.read_parquet(private / "truth.parquet"),
                              pd.read_parquet(private / "required.parquet"),
                              read_prompt_block(query.prompt, "Scope")["entity_key"]).execution
    grading = annotate.query_grading(folder, query.query_id, annotate.Label(gold))
    score = score_query(task.spec.answer, execution, gold, grading)
    values = json.loads(execution.answer_text or "{}").get("metrics", {}) if execution.answer_text else {}
    shown = ", ".join(f"{k} {v:.3g}" for k, v in sorted(values.items()) if isinstance(v, int | float))
    passed = sum(score.metric_passes.values())
    written = {name: f.data for name, f in attempt.files.items() if f.data is not None}
    error = attribute(task.spec, score.pass_rate >= 1.0, written, label.checkpoints or {})
    if not shown and execution.answer_text:
        shown = " ".join(execution.answer_text.split())[:60]
    return (f"{score.outcome.value} {passed}/{len(score.metric_passes)} [{shown}]"
            + (f" error: {error}" if error else "") + f" {attempt.wall_seconds:.1f}s")


def main() -> None:
    """Build, label, verify and try one task (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_id")
    parser.add_argument("--queries", type=int, default=6)
    parser.add_argument("--agents", default=FLOORS_AND_CANDIDATE)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    params = load_params()
    domains = sorted(p.name for p in CATALOG.iterdir() if (p / "scopes.yaml").exists())
    task = next((t for t in load_catalog(CATALOG, domains) if t.spec.id == args.task_id), None)
    if task is None:
        raise SystemExit(f"no task {args.task_id!r} in {CATALOG}")
    folder = task_dir(args.out or Path("/tmp/trial") / args.task_id, task.spec.id)
    shutil.rmtree(folder, ignore_errors=True)
    limits, hidden = params.construct.limits.to_limits(), [Path.cwd().resolve()]
    queries, discards, key = draw(task, args.queries)
    labels, more, seconds = build(task, queries, key, folder, limits, hidden)
    for discard in discards + more:
        print(f"DISCARD {discard.scope} [{discard.stage}]: {discard.reason}")
    agents = [a for a in args.agents.split(",") if a]
    for query in queries:
        if query.query_id not in labels:
            continue
        refs = json.loads((folder / "private" / query.query_id / "references.json").read_text()) \
            if (folder / "private" / query.query_id / "references.json").exists() else {}
        print(f"\nQUERY {query.scope} ({query.n_entities} entities, {query.start}..{query.end}) "
              f"annotator {seconds[query.query_id]:.1f}s")
        print(f"  gold: {labels[query.query_id].gold}")
        for name, values in refs.items():
            print(f"  ref {name}: {values}")
        label = labels[query.query_id]
        with ThreadPoolExecutor(2) as pool:
            results = pool.map(lambda a, q=query, g=label: (a, run_agent(a, task, q, folder, g, limits, hidden)),
                               agents)
            for name, result in results:
                print(f"  {name}: {result}")
    print(f"\n{len(labels)} of {len(queries)} drawn queries kept; {len(discards) + len(more)} discarded")


if __name__ == "__main__":
    main()
