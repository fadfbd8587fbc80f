"""A graded task with a train, a val and a test query, for the optimisation tests (stages/optimize/).

The task: predict `qobs_mm_d` of two basins over four days into `work/predictions.parquet`; NSE
(median over basins, target > 0.5) and pooled RMSE (lower is better) are recomputed from it.
`PREDICTIONS` scores per-basin NSE 0.8 and 0.95 (median 0.875) and RMSE 0.5 (by hand: the grading
tests); `PREDICTING_CODE` is model code that writes them and reports numbers far better.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pandas as pd
import yaml
from scibench_testing.graded import days, graded_task, metric, parquet
from scibench_testing.limits import limits_with
from scibench_testing.llm_tasks import llm_options
from scibench_testing.project import ROOT

from benchmarks.runs import write_benchmark
from stages.evaluation.agents.llm.options import ModelAccess
from stages.evaluation.agents.llm.scripted import Request, ScriptedLLM, Turn
from stages.evaluation.agents.llm.workflows import Workflow
from stages.layout import task_dir
from stages.optimize.candidates import Evaluator
from stages.optimize.designer import Designer
from stages.optimize.search import Budget, Search

DATES = days(date(2000, 1, 8), 4)
TRUTH = pd.DataFrame({"gauge_id": ["a"] * 4 + ["b"] * 4, "date": DATES * 2,
                      "qobs_mm_d": [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]})
REQUIRED = TRUTH[["gauge_id", "date"]]
SIMULATED = [1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]
PREDICTIONS = parquet(REQUIRED.assign(qsim_mm_d=SIMULATED))
TASK = graded_task([metric("nse", "nse", "qsim_mm_d", "median", "> 0.5"),
                    metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")])
SCOPE = '\n\n## Scope\n\n```json\n{"entity_key": "gauge_id"}\n```\n'
ARTIFACT = ('\n## Artifact\n\n```json\n{"file": "predictions.parquet", "key": ["gauge_id", "date"], '
            '"columns": {"qsim_mm_d": "float"}}\n```\n')
SPLITS = ("train", "val", "test")
TASK_TEXT = "# tiny-graded\n\nPredict qobs_mm_d."
PREDICTING_CODE = f"""import json
import pandas as pd
dates = pd.to_datetime({[str(day.date()) for day in DATES]!r} * 2)
pd.DataFrame({{"gauge_id": ["a"] * 4 + ["b"] * 4, "date": dates, "qsim_mm_d": {SIMULATED!r}}}).to_parquet(
    "work/predictions.parquet", index=False)
json.dump({{"metrics": {{"nse": 0.99, "rmse": 0.01}}}}, open("work/answer.json", "w"))
"""


ZEROS = PREDICTING_CODE.replace(repr(SIMULATED), "[0.0] * 8")  # the artifact, every prediction 0: NSE misses
# a route that invents its numbers: excellent self-reported metrics, no predictions handed in
FABRICATING_CODE = 'import json\njson.dump({"metrics": {"nse": 0.999, "rmse": 0.001}}, open("work/answer.json", "w"))\n'
PLAN = "1. Read the basins' days.\n2. Predict each day."
PREPARED = "Prepared: work/prep/days.parquet, one row per basin and day."


def design(name: str, *nodes: str) -> str:
    """A designer's reply: one workflow document (each node a YAML flow mapping) in a ```yaml block."""
    lines = "".join(f"  - {node}\n" for node in nodes)
    return f"Here it is.\n```yaml\nname: {name}\nnodes:\n{lines}```\n"


PLAN_NODE = "{id: plan, op: generate, role: planner, prompt: planner, heading: Plan}"
PLAN_THEN_PROGRAM = design("plan_then_program", PLAN_NODE,
                           "{id: solve, op: program, role: modeler, prompt: one_turn, inputs: [plan]}")


def team_model(designs: list[str], code_for: Callable[[str], str]) -> Callable[[Request], Turn]:
    """A scripted model: the designer's replies in turn (the last repeated), a plan, a data note, and the
    code `code_for` picks from what the programming node was shown (its task message)."""
    asked = iter(designs)

    def model(request: Request) -> Turn:
        system, task = request.body["messages"][0]["content"], request.body["messages"][1]["content"]
        if system.startswith("You design workflows"):
            return Turn(content=next(asked, designs[-1]))
        if "You assemble the team" in system:
            return Turn(content=designs[0])
        if "You plan the analysis" in system:
            return Turn(content=PLAN)
        if "data-preparation analyst" in system:
            return Turn(content=PREPARED)
        return Turn(content=f"```python\n{code_for(task)}```")
    return model


def graded_pools(folder: Path) -> Path:
    """Write the benchmark (one query per split: q-train, q-val, q-test) under `folder`."""
    write_benchmark(folder, {TASK.id: yaml.safe_dump(TASK.model_dump(mode="json"))},
                    [{"query_id": f"q-{split}", "task_id": TASK.id, "scope": "s", "split": split,
                      "prompt": TASK_TEXT + SCOPE + ARTIFACT, "files": {"README.md": "nothing\n"}}
                     for split in SPLITS])
    private = task_dir(folder, TASK.id) / "private"
    (private / "queries.json").write_text(json.dumps({f"q-{split}": {"gold": {"metrics": {"nse": 0.9, "rmse": 0.4}}}
                                                      for split in SPLITS}))
    for split in SPLITS:
        (private / f"q-{split}").mkdir()
        TRUTH.to_parquet(private / f"q-{split}" / "truth.parquet")
        REQUIRED.to_parquet(private / f"q-{split}" / "required.parquet")
    return folder


@contextmanager
def search_on_pools(folder: Path, model: Callable[[Request], Turn], budget: Budget, seed: int = 0,
                    start: Workflow | None = None) -> Iterator[Search]:
    """A search on `graded_pools` (train q-train, val q-val) against the scripted `model`, its designer
    on the same model (the key must be in the environment: llm_tasks.KEY_ENV)."""
    benchmark = graded_pools(folder / "benchmark")
    with ScriptedLLM(model) as server:
        access = llm_options(server.base_url)
        evaluator = Evaluator(benchmark, access, folder / "search", limits_with(wall_seconds=60), [ROOT])
        designer = Designer.of(ModelAccess.model_validate({key: access[key] for key in
                                                           ("model", "base_url", "api_key_env", "generation")}))
        yield Search(evaluator, TASK_TEXT, ["q-train"], ["q-val"], designer, budget, seed=seed, start=start)
