"""DVC entry point `optimize@<run>`: one method under one protocol on the pools -> processed/optimize/<run>/.

A run is `<method>-task` (a workflow learned on each task's own train and val queries) or
`<method>-category` (one per task category, on the union of its tasks' pools), as ST-Bench's two
protocols; `one_turn` is the single-agent baseline on the same model, never searched. The run
writes what `evaluate@<run>` evaluates on the test split (the llm agent that params.yaml's
`optimize.model` and `workflows: processed/optimize/<run>` define):

    workflows/<unit>.yaml   the workflow learned for a task or category
    index.json              task id -> its workflow document
    search/<unit>.jsonl     every candidate: parent, per-query rewards (recomputed and self-reported),
                            tokens and seconds; <unit>.designer.jsonl: the designer's calls
    summary.json            per unit: the workflow kept, its val reward, the search's cost, the audit

Every candidate run is journaled under `optimize.cache_dir`, keyed by the model and the document's
content: a killed run, or another method proposing the same document, runs nothing twice. Without
`optimize.model` the run writes only summary.json saying why it skipped.

    python -m stages.optimize.protocol <run>
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd

from stages.built_benchmark import built_task
from stages.evaluation.agents.llm.options import ModelAccess
from stages.evaluation.agents.llm.workflows import builtin_workflow
from stages.hashing import content_hash, write_json
from stages.layout import BENCHMARK, OPTIMIZE
from stages.optimize.baseline import baseline_values
from stages.optimize.candidates import Evaluator, document
from stages.optimize.designer import Designer
from stages.optimize.methods import BUDGETS, METHODS
from stages.optimize.search import Search
from stages.params import BASELINE_RUN, ProjectParams, load_params

SHOWN_TASKS = 3  # a category's designer is shown this many of its tasks' prompts


def units(queries: pd.DataFrame, benchmark: Path, protocol: str) -> dict[str, list[str]]:
    """What a workflow is learned for: each task, or each category (its tasks)."""
    tasks = sorted(queries["task_id"].unique())
    if protocol == "task":
        return {task_id: [task_id] for task_id in tasks}
    grouped: dict[str, list[str]] = {}
    for task_id in tasks:
        grouped.setdefault(built_task(benchmark, task_id).category, []).append(task_id)
    return dict(sorted(grouped.items()))


def task_text(pool: pd.DataFrame, unit: str, protocol: str) -> str:
    """What the designer is shown: the first train query's prompt of each task (a category: a few)."""
    train = pool[pool["split"] == "train"].sort_values("query_id").drop_duplicates("task_id")
    prompts = train["prompt"].tolist()[: 1 if protocol == "task" else SHOWN_TASKS]
    if protocol == "task":
        return prompts[0] if prompts else f"(task {unit}: no train query)"
    shown = "\n\n---\n\n".join(prompts)
    return f"One workflow serves every task of the category `{unit}`. Some of its tasks:\n\n{shown}"


def run_protocol(run: str, params: ProjectParams, benchmark: Path = BENCHMARK, out: Path | None = None) -> dict:
    """Learn the run's workflows (or say why not); the summary written."""
    settings, out = params.optimize, out or OPTIMIZE / run
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    method, protocol = settings.method_and_protocol(run)
    summary = {"run": run, "method": method, "protocol": protocol}
    if (reason := settings.skipped()) is not None:
        return _written(out, summary | {"skipped": reason})
    queries = pd.read_parquet(benchmark / "queries.parquet").sort_values("query_id")
    pools = queries[queries["split"] != "test"]
    grouped = units(queries, benchmark, protocol)
    if run == BASELINE_RUN:  # the one-turn baseline on every task: nothing searched
        (out / "workflows").mkdir()
        (out / "workflows" / "one_turn.yaml").write_text(document(builtin_workflow("one_turn"))[0])
        write_json(out / "index.json", {task_id: "workflows/one_turn.yaml"
                                        for task_id in sorted(queries["task_id"].unique())})
        return _written(out, summary | {"units": {}})
    access = ModelAccess.model_validate({key: value for key, value in settings.model.items()
                                         if key in ModelAccess.model_fields})  # the designer's: no loop options
    evaluator = Evaluator(benchmark, settings.model, Path(settings.cache_dir) / content_hash(access.identity()),
                          params.evaluate.limits.to_limits(), [Path.cwd().resolve()], {}, settings.concurrency,
                          params.evaluate.infra_retries)
    budget = settings.budgets.get(method, BUDGETS[method])
    index, summary["units"] = {}, {}
    for unit, tasks in grouped.items():
        pool = pools[pools["task_id"].isin(tasks)]
        train, val = (pool.loc[pool["split"] == split, "query_id"].tolist() for split in ("train", "val"))
        search = Search(evaluator, task_text(pool, unit, protocol), train, val, Designer.of(access), budget,
                        settings.seed)
        evaluator.baseline |= baseline_values(evaluator, search.scored_on)
        kept = METHODS[method](search)
        text, digest = document(kept)
        (out / "workflows").mkdir(exist_ok=True)
        (out / "workflows" / f"{unit}.yaml").write_text(text)
        index |= {task_id: f"workflows/{unit}.yaml" for task_id in tasks}
        search.write_log(out / "search" / f"{unit}.jsonl")
        summary["units"][unit] = unit_summary(search, kept, digest, tasks)
        print(f"optimize@{run}: {unit}: kept {kept.name} ({digest[:12]}), val reward "
              f"{summary['units'][unit]['val_reward']}")
    write_json(out / "index.json", dict(sorted(index.items())))
    return _written(out, summary)


def unit_summary(search: Search, kept, digest: str, tasks: list[str]) -> dict:
    """One unit's line of the summary: what was kept, how it scored, what the search cost, the audit."""
    kept_steps = [step for step in search.log if step.workflow == digest]
    return {"tasks": tasks, "workflow": digest, "name": kept.name, "scored_on": search.scored_on,
            "val_reward": kept_steps[0].mean if kept_steps else None,
            "candidates": len({step.workflow for step in search.log}),
            "search": {"tokens": sum(step.tokens for step in search.log),
                       "seconds": round(sum(step.seconds for step in search.log), 3),
                       "designer": search.designer.asker.usage if search.designer else None},
            "audit": search.audit(kept)}


def _written(out: Path, summary: dict) -> dict:
    write_json(out / "summary.json", summary)
    if "skipped" in summary:
        print(f"optimize@{summary['run']}: skipped: {summary['skipped']}")
    elif summary["run"] == BASELINE_RUN:
        print(f"optimize@{BASELINE_RUN}: the one-turn baseline on every task (nothing searched)")
    else:
        units = summary["units"].values()
        print(f"optimize@{summary['run']}: {len(units)} workflows learned, "
              f"{sum(unit['candidates'] for unit in units)} candidates scored")
    return summary


def main() -> None:
    """The DVC entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    args = parser.parse_args()
    params = load_params()
    if args.run not in params.optimize.runs:
        parser.error(f"{args.run!r} is not one of params.yaml optimize.runs {params.optimize.runs}")
    run_protocol(args.run, params)


if __name__ == "__main__":
    main()
