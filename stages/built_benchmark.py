"""The built benchmark (`processed/benchmark`) as its readers see it: splits, its id, the tasks' specs.

Evaluation, scoring and the catalog summary (validity, the card) read the build through these;
construction writes it (`stages.construction.benchmark`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pandas as pd

from stages.catalog import TaskSpec
from stages.layout import task_dir
from stages.yamlfile import read_yaml


def load_split(benchmark: Path, split: str) -> pd.DataFrame:
    """The queries of one split, sorted by task then query id."""
    queries = pd.read_parquet(benchmark / "queries.parquet")
    chosen = queries[queries["split"] == split]
    return chosen.sort_values(["task_id", "query_id"]).reset_index(drop=True)


def benchmark_id(benchmark: Path) -> str:
    """The content id of the built benchmark."""
    return json.loads((benchmark / "benchmark.json").read_text())["benchmark_id"]


@functools.cache
def built_task(benchmark: Path, task_id: str) -> TaskSpec:
    """The spec of a built task, as the benchmark recorded it."""
    path = task_dir(benchmark, task_id) / "private" / "task.yaml"
    return TaskSpec.model_validate(read_yaml(path))


def built_specs(benchmark: Path) -> dict[str, TaskSpec]:
    """The spec of every task the benchmark kept, by id."""
    kept = json.loads((benchmark / "benchmark.json").read_text())["tasks"]
    return {task_id: TaskSpec.model_validate(read_yaml(task_dir(benchmark, task_id) / "private" / "task.yaml"))
            for task_id in kept}
