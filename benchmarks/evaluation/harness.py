"""`make bench`, in-process measurements: harness overhead, artifact reading, scoring throughput, kernel steps.

The package's docstring says what each measures and its target.
"""

from __future__ import annotations

import io
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from stages.catalog import TaskSpec
from stages.evaluation.program import AgentProgram
from stages.evaluation.runner import run_query
from stages.layout import CATALOG
from stages.sandbox import SandboxLimits
from stages.sandbox.kernel import Kernel
from stages.scoring.aggregate.intervals import mean_interval, task_resamples
from stages.scoring.aggregate.summary import summarize
from stages.scoring.query.artifacts import parse_artifact, read_artifact
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.scorer import Grading, score_query
from stages.yamlfile import read_yaml

TASK = CATALOG / "camels" / "camels-model-comparison" / "task.yaml"


def harness_overhead(runs: int = 30) -> dict:
    """Median seconds of one query of a trivial agent through the whole harness path."""
    spec = TaskSpec.model_validate(read_yaml(TASK))
    gold = {"metrics": {metric.name: 0.6 for metric in spec.answer.metrics}}
    with tempfile.TemporaryDirectory(prefix="scibench-bench-harness-") as work:
        public = Path(work) / "public"
        public.mkdir()
        (public / "timeseries.parquet").write_bytes(b"PAR1" + bytes(4096) + b"PAR1")
        seconds, limits = [], SandboxLimits(wall_seconds=30).to_limits()
        for _ in range(runs):
            start = time.perf_counter()
            attempt = run_query("# prompt\n", public, AgentProgram(["/bin/true"]), limits,
                                hidden=[Path.cwd().resolve()], collect=(spec.artifact.file,))
            execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error, attempt.answer_text)
            score_query(spec.answer, execution, gold)
            seconds.append(time.perf_counter() - start)
            if attempt.infra_error:
                raise RuntimeError(f"harness overhead: the sandbox failed: {attempt.infra_error}")
    return {"runs": runs, "median_s": round(statistics.median(seconds), 4),
            "p90_s": round(sorted(seconds)[int(0.9 * (runs - 1))], 4), "target_s": 0.1}


def artifact_reading(runs: int = 200, basins: int = 100, days: int = 365) -> dict:
    """Median seconds to read one honest artifact in this process and in the forked child."""
    spec = TaskSpec.model_validate(read_yaml(TASK)).artifact
    ids = [f"{basin:08d}" for basin in range(basins)]
    dates = pd.date_range("2000-01-01", periods=days).astype("datetime64[ns]")
    required = pd.DataFrame({spec.key[0]: np.repeat(ids, days), spec.key[1]: np.tile(dates, basins)})
    values = {column: np.random.default_rng(0).random(len(required)) for column in spec.columns}
    buffer = io.BytesIO()
    required.assign(**values).to_parquet(buffer, index=False)
    data = buffer.getvalue()
    medians = {}
    for name, read in (("in_process", parse_artifact), ("child", read_artifact)):
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            read(data, spec, required)
            seconds.append(time.perf_counter() - start)
        medians[name] = statistics.median(seconds)
    return {"runs": runs, "rows": len(required), "file_bytes": len(data),
            "in_process_s": round(medians["in_process"], 4), "child_s": round(medians["child"], 4),
            "overhead_s": round(medians["child"] - medians["in_process"], 4), "target_overhead_s": 0.1}


def synthetic_results(spec: TaskSpec, n: int, seed: int = 0) -> list[Execution]:
    """Journal-like results: 80 % answered with random metrics, 10 % failed runs, 10 % broken JSON."""
    rng = random.Random(seed)
    names = [metric.name for metric in spec.answer.metrics]
    results = []
    for _ in range(n):
        draw = rng.random()
        if draw < 0.8:
            results.append(Execution(0, False, None, json.dumps({"metrics": {n: rng.random() for n in names}})))
        elif draw < 0.9:
            results.append(Execution(1, False, None, None))
        else:
            results.append(Execution(0, False, None, "{broken"))
    return results


def scoring_throughput(n: int = 100_000, tasks: int = 100) -> dict:
    """Results scored per second, from journal results to the summary with its interval."""
    spec = TaskSpec.model_validate(read_yaml(TASK))
    names = [metric.name for metric in spec.answer.metrics]
    gold = {"metrics": {name: 0.6 for name in names}}
    grading = Grading({reference: {name: 0.3 for name in names} for reference in spec.reference_models}, None)
    results = synthetic_results(spec, n)
    start = time.perf_counter()
    per_task: dict[str, list] = {}
    for index, execution in enumerate(results):
        per_task.setdefault(f"task-{index % tasks:03d}", []).append(
            score_query(spec.answer, execution, gold, grading))
    summary = summarize(per_task)
    values = {task: [score.pass_rate for score in scores] for task, scores in per_task.items()}
    resampled = task_resamples({t: np.array(v) for t, v in values.items()}, 1000, 0)
    mean_interval(resampled, list(resampled), 0.95, 1000)
    seconds = time.perf_counter() - start
    return {"results": n, "tasks": tasks, "seconds": round(seconds, 3),
            "per_second": round(n / seconds), "target_per_second": 100_000, "score": summary["score"]}


def kernel_steps(kernels: int = 10, cells: int = 20) -> dict:
    """A query's kernel (stages/sandbox/kernel.py): its start, and one code step in it against a fresh interpreter.

    `kernels` kernels are started one after another; in each, the first cell imports pandas and
    `cells` more cells each build a small frame and print (what a model's later step costs). The
    comparison is what each step cost when every step was a fresh `python` importing pandas.
    """
    limits = SandboxLimits().to_limits()
    starts, steps, first = [], [], []
    with tempfile.TemporaryDirectory(prefix="scibench-bench-kernel-") as work:
        public = Path(work) / "public"
        public.mkdir()
        for _ in range(kernels):
            started = time.perf_counter()
            with Kernel(limits, "the prompt", public) as kernel:
                starts.append(time.perf_counter() - started)
                ran = kernel.run("import pandas as pd\nprint(1)", 60, 1000)
                first.append(ran.seconds)
                for _ in range(cells):
                    started = time.perf_counter()
                    kernel.run("frame = pd.DataFrame({'a': [1, 2]})\nprint(len(frame))", 60, 1000)
                    steps.append(time.perf_counter() - started)
    fresh = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pandas as pd\nprint(len(pd.DataFrame({'a': [1, 2]})))"],
                       check=True, capture_output=True)
        fresh.append(time.perf_counter() - started)
    return {"kernels": kernels, "cells": cells, "start_median_s": round(statistics.median(starts), 4),
            "first_cell_pandas_s": round(statistics.median(first), 4),
            "step_median_s": round(statistics.median(steps), 4),
            "fresh_python_pandas_median_s": round(statistics.median(fresh), 4), "target_step_s": 0.05}
