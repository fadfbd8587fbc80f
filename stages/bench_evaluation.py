"""`make bench`, evaluation part: harness overhead per query and scoring throughput.

- `harness_overhead`: a trivial agent (`/bin/true`) on a staged query — workspace built from the
  public files, the sandbox started and torn down, answer and artifact collected, the query scored.
  The median over runs is the harness's own cost per query (target <= 0.1 s).
- `scoring_throughput`: ST-Bench scoring of synthetic journal results for a two-metric graded task
  (outcome, realistic filter, targets, references, reward), then the task and system summary with
  bootstrap intervals. Results per second over the whole batch (target >= 100,000).

Both write into `processed/metrics/bench_evaluation.json` beside the ingest figures.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from stages.agents.program import AgentProgram
from stages.catalog import TaskSpec
from stages.layout import CATALOG
from stages.runner import run_query
from stages.sandbox import Limits
from stages.scoring.aggregate import summarize
from stages.scoring.intervals import mean_interval, task_resamples
from stages.scoring.outcomes import Execution
from stages.scoring.query import Grading, score_query

TASK = CATALOG / "camels" / "camels-model-comparison" / "task.yaml"


def harness_overhead(runs: int = 30) -> dict:
    """Median seconds of one query of a trivial agent through the whole harness path."""
    spec = TaskSpec.model_validate(yaml.safe_load(TASK.read_text()))
    gold = {"metrics": {metric.name: 0.6 for metric in spec.answer.metrics}}
    with tempfile.TemporaryDirectory(prefix="scibench-bench-harness-") as work:
        public = Path(work) / "public"
        public.mkdir()
        (public / "timeseries.parquet").write_bytes(b"PAR1" + bytes(4096) + b"PAR1")
        seconds = []
        for _ in range(runs):
            start = time.perf_counter()
            attempt = run_query("# prompt\n", public, AgentProgram(["/bin/true"]), Limits(wall_seconds=30),
                                hidden=[Path.cwd().resolve()], collect=(spec.artifact.file,))
            execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error, attempt.answer_text)
            score_query(spec.answer, execution, gold)
            seconds.append(time.perf_counter() - start)
            if attempt.infra_error:
                raise RuntimeError(f"harness overhead: the sandbox failed: {attempt.infra_error}")
    return {"runs": runs, "median_s": round(statistics.median(seconds), 4),
            "p90_s": round(sorted(seconds)[int(0.9 * (runs - 1))], 4), "target_s": 0.1}


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
    spec = TaskSpec.model_validate(yaml.safe_load(TASK.read_text()))
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


def main() -> None:
    """`python -m stages.bench_evaluation`: measure and write the figures."""
    from stages.hashing import write_json
    from stages.layout import METRICS

    results = {"harness_overhead": harness_overhead(), "scoring_throughput": scoring_throughput()}
    write_json(METRICS / "bench_evaluation.json", results)
    overhead, scoring = results["harness_overhead"], results["scoring_throughput"]
    print(f"harness overhead per query: {overhead['median_s']} s median (target <= {overhead['target_s']})")
    print(f"scoring: {scoring['per_second']} results/s (target >= {scoring['target_per_second']})")


if __name__ == "__main__":
    main()
