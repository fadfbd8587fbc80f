"""A graded task with a train, a val and a test query, for the optimisation tests (stages/optimize/).

The task: predict `qobs_mm_d` of two basins over four days into `work/predictions.parquet`; NSE
(median over basins, target > 0.5) and pooled RMSE (lower is better) are recomputed from it.
`PREDICTIONS` scores per-basin NSE 0.8 and 0.95 (median 0.875) and RMSE 0.5 (by hand: the grading
tests); `PREDICTING_CODE` is model code that writes them and reports numbers far better.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pandas as pd
import yaml
from scibench_testing.graded import days, graded_task, metric, parquet

from benchmarks.runs import write_benchmark
from stages.layout import task_dir

DATES = days(date(2000, 1, 8), 4)
TRUTH = pd.DataFrame({"gauge_id": ["a"] * 4 + ["b"] * 4, "date": DATES * 2,
                      "qobs_mm_d": [1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]})
REQUIRED = TRUTH[["gauge_id", "date"]]
SIMULATED = [1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]
PREDICTIONS = parquet(REQUIRED.assign(qsim_mm_d=SIMULATED))
TASK = graded_task([metric("nse", "nse", "qsim_mm_d", "median", "> 0.5"),
                    metric("rmse", "rmse", "qsim_mm_d", "pooled", "lower is better")])
SCOPE = '\n\n## Scope\n\n```json\n{"entity_key": "gauge_id"}\n```\n'
SPLITS = ("train", "val", "test")
PREDICTING_CODE = f"""import json
import pandas as pd
dates = pd.to_datetime({[str(day.date()) for day in DATES]!r} * 2)
pd.DataFrame({{"gauge_id": ["a"] * 4 + ["b"] * 4, "date": dates, "qsim_mm_d": {SIMULATED!r}}}).to_parquet(
    "work/predictions.parquet", index=False)
json.dump({{"metrics": {{"nse": 0.99, "rmse": 0.01}}}}, open("work/answer.json", "w"))
"""


def graded_pools(folder: Path) -> Path:
    """Write the benchmark (one query per split: q-train, q-val, q-test) under `folder`."""
    write_benchmark(folder, {TASK.id: yaml.safe_dump(TASK.model_dump(mode="json"))},
                    [{"query_id": f"q-{split}", "task_id": TASK.id, "scope": "s", "split": split,
                      "prompt": "# tiny-graded\n\nPredict qobs_mm_d." + SCOPE, "files": {"README.md": "nothing\n"}}
                     for split in SPLITS])
    private = task_dir(folder, TASK.id) / "private"
    (private / "queries.json").write_text(json.dumps({f"q-{split}": {"gold": {"metrics": {"nse": 0.9, "rmse": 0.4}}}
                                                      for split in SPLITS}))
    for split in SPLITS:
        (private / f"q-{split}").mkdir()
        TRUTH.to_parquet(private / f"q-{split}" / "truth.parquet")
        REQUIRED.to_parquet(private / f"q-{split}" / "required.parquet")
    return folder
