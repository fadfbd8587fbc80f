"""`make bench`: full-scale ingest of CAMELS-US and FLUXNET-CH4 half-hourly against two references.

For each dataset, synthetic raw files are written once and three paths read them, each in a fresh
process: `scibench` (the pipeline's own stages), `pandas_loop` (the per-file pandas loop scientists
write) and `polars_floor` (a lazy multi-file scan straight to Parquet: no parsing of dates, joins
or checks). Wall time, the process's peak resident memory and rows written are recorded, with the
ratios (targets: >= 4x faster than the pandas loop, <= 1.5x the floor), in
processed/metrics/bench.json. The paths live in `bench_camels` and `bench_fluxnet`.

The files are written by a child process too: a forked child's peak RSS counts the pages it shared
with its parent before `exec`, so the measuring process must stay small to measure its children.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stages.hashing import write_json
from stages.layout import METRICS

PATHS = ("scibench", "pandas_loop", "polars_floor")
DATASETS = {"camels_us": "benchmarks.camels", "fluxnet_ch4": "benchmarks.fluxnet"}


def measure(dataset: str, name: str, raw: Path, out: Path) -> dict:
    """Run one path in a fresh process; its wall time, peak RSS and rows."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "benchmarks.ingest", "--one", dataset, name, str(raw), str(out)],
                             stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"bench path {dataset}/{name} failed")
    rows = int(child.stdout.read().strip().splitlines()[-1])
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "rows": rows}


def bench(dataset: str, work: Path, repeat: int = 1, **sizes) -> dict:
    """Generate one dataset's files, run every path on them `repeat` times (in turns), and compute the ratios.

    Each path's seconds are the median of its runs (all runs are kept in `runs_s`), its peak memory
    the largest seen; on a shared machine single wall times swing by tens of percent.
    """
    command = [sys.executable, "-m", "benchmarks.ingest", "--prepare", dataset, str(work), json.dumps(sizes)]
    output = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True).stdout
    prepared = json.loads(output.strip().splitlines()[-1])
    raw, text_mb = Path(prepared["raw"]), prepared["text_mb"]
    runs = {name: [] for name in PATHS}
    for _ in range(repeat):
        for name in PATHS:
            runs[name].append(measure(dataset, name, raw, work / name))
    results = {name: {"seconds": statistics.median(r["seconds"] for r in found),
                      "runs_s": [r["seconds"] for r in found],
                      "peak_rss_mb": max(r["peak_rss_mb"] for r in found),
                      "rows": found[0]["rows"]} for name, found in runs.items()}
    if any(len({r["rows"] for r in found}) > 1 for found in runs.values()):
        raise RuntimeError(f"{dataset}: a path wrote a different number of rows on another run")
    ours, pandas_s, floor_s = (results[n]["seconds"] for n in PATHS)
    return {
        **sizes, "repeat": repeat, "text_mb": text_mb, **results,
        "speedup_vs_pandas_loop": round(pandas_s / ours, 2),
        "ratio_to_polars_floor": round(ours / floor_s, 2),
    }


def main() -> None:
    """`python -m benchmarks.ingest` (full size by default; the flags shrink it)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", nargs=4, metavar=("DATASET", "PATH", "RAW", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--prepare", nargs=3, metavar=("DATASET", "WORK", "SIZES"), help=argparse.SUPPRESS)
    parser.add_argument("--basins", type=int, default=671)
    parser.add_argument("--sites", type=int, default=40)
    parser.add_argument("--years", type=int, nargs=2, default=None,
                        help="first and last year for both datasets (default 1980-2014 and 2009-2018)")
    parser.add_argument("--only", choices=sorted(DATASETS), action="append")
    parser.add_argument("--repeat", type=int, default=3, help="runs per path; the median time is reported")
    parser.add_argument("--out", type=Path, default=METRICS / "bench.json")
    args = parser.parse_args()
    if args.one:
        dataset, name, raw, out = args.one
        print(importlib.import_module(DATASETS[dataset]).RUNNERS[name](Path(raw), Path(out)))
        return
    if args.prepare:
        dataset, work, sizes = args.prepare
        module = importlib.import_module(DATASETS[dataset])
        raw = module.prepare(Path(work), **json.loads(sizes))
        print(json.dumps({"raw": str(raw), "text_mb": module.text_megabytes(raw)}))
        return
    years = {"first_year": args.years[0], "last_year": args.years[1]} if args.years else {}
    sizes = {"camels_us": {"n_basins": args.basins, **years}, "fluxnet_ch4": {"n_sites": args.sites, **years}}
    results = {}
    for dataset in args.only or sorted(DATASETS):
        with tempfile.TemporaryDirectory(prefix=f"scibench-bench-{dataset}-") as work:
            results[dataset] = bench(dataset, Path(work), args.repeat, **sizes[dataset])
    write_json(args.out, results)
    for dataset, result in results.items():
        for name in PATHS:
            print(f"{dataset:>12} {name:>13}: {result[name]['seconds']:7.2f} s  peak "
                  f"{result[name]['peak_rss_mb']:8.1f} MB  rows {result[name]['rows']}")
        print(f"{dataset:>12}: text {result['text_mb']} MB; scibench is {result['speedup_vs_pandas_loop']}x "
              f"the pandas loop (target >= 4) and {result['ratio_to_polars_floor']}x the polars floor "
              "(target <= 1.5)")


if __name__ == "__main__":
    main()
