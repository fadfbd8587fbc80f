"""`make bench`, generation part: the full SDA-style build (6,000 instances) on the machine's cores.

A fresh process runs what the `generate` flow runs at the `full` profile, without Prefect: every
scenario's dataset and candidates (`build.on_scenario`, on two spawned worker processes, as the
flow's task runner runs them), the selection of 200 per (domain, task type) and the files written
to a temporary folder. Wall time, the peak resident memory of the largest process (the build's or
one worker's), instances kept per pair and rejections by reason are written to
processed/metrics/bench_generation.json (target: <= 10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path

from stages.hashing import write_json
from stages.layout import METRICS

TARGET_SECONDS = 600


def build_once(out_dir: Path, profile: str, workers: int) -> dict:
    """The flow's SDA build at `profile`; its summary."""
    from stages.generate.sda import load_scenarios
    from stages.generate.sda.build import on_scenario, select, write
    from stages.params import load_params

    settings = load_params().generate.sda
    count, seen, scenarios = settings.scenarios_per_domain[profile], {}, []
    for scenario in load_scenarios():
        seen[scenario.domain] = seen.get(scenario.domain, 0) + 1
        if seen[scenario.domain] <= count:
            scenarios.append(scenario)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        parts = list(pool.map(on_scenario, scenarios, repeat(settings)))
    return write(select(parts, settings.per_pair[profile]), out_dir)


def measure(profile: str, workers: int) -> dict:
    """Run the build in a fresh process; wall seconds, peak RSS and the build's summary."""
    with tempfile.TemporaryDirectory(prefix="scibench-bench-generate-") as work:
        start = time.monotonic()
        child = subprocess.Popen([sys.executable, "-m", "benchmarks.generation", "--child", work, profile,
                                  str(workers)], stdout=subprocess.PIPE, text=True)
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - start
    if status != 0:
        raise RuntimeError(f"generation bench: the build exited with status {status}")
    summary = json.loads(output)
    return {"profile": profile, "workers": workers, "seconds": round(seconds, 1),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "instances": summary["instances"],
            "datasets": summary["datasets"], "within_target": seconds <= TARGET_SECONDS,
            "by_domain_and_task_type": summary["by_domain_and_task_type"], "rejected": summary["rejected"]}


def main() -> None:
    """`python -m benchmarks.generation` (the full profile by default)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", nargs=3, metavar=("OUT", "PROFILE", "WORKERS"), help=argparse.SUPPRESS)
    parser.add_argument("--profile", default="full", choices=("tiny", "default", "full"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=METRICS / "bench_generation.json")
    args = parser.parse_args()
    if args.child:
        out, profile, workers = args.child
        print(json.dumps(build_once(Path(out), profile, int(workers))))
        return
    result = measure(args.profile, args.workers)
    write_json(args.out, result)
    print(f"generate@sda ({result['profile']}): {result['instances']} instances on {result['datasets']} datasets"
          f" in {result['seconds']} s, peak {result['peak_rss_mb']} MB"
          f" ({'within' if result['within_target'] else 'over'} the {TARGET_SECONDS} s target)")


if __name__ == "__main__":
    main()
