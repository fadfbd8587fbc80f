r"""Benchmark paths for FLUXNET-CH4 half-hourly ingest, measured on the same synthetic files.

- `scibench`: ingest@fluxnet_ch4 (read, validate, convert to UTC, write the source tables);
- `pandas_loop`: the per-file `pandas.read_csv(na_values=[-9999])` loop flux scientists write, with
  `TIMESTAMP_START` parsed as `%Y%m%d%H%M` and a site id column, concatenated into one frame and
  one Parquet file;
- `polars_floor`: one lazy multi-file `polars.scan_csv` of the same files straight to Parquet, no
  timestamp parsing, joins or checks.

Each runner takes the raw folder and an output folder and returns the number of half-hourly rows
it wrote. `measure` runs one path in a fresh process and records its wall time and peak resident
memory (`os.wait4`); `python -m stages.bench_fluxnet` runs all three and prints the ratios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stages.synthesize import fluxnet_ch4 as synthesize_fluxnet

PATHS = ("scibench", "pandas_loop", "polars_floor")
HH_GLOB = "**/FLX_*_FLUXNET-CH4_HH_*.csv"
INGEST_PARAMS = {"on_error": "raise", "time_reference": "utc", "unknown_columns": "keep",
                 "utc_offsets_h": {}}


def prepare(work: Path, n_sites: int = 40, first_year: int = 2009, last_year: int = 2018) -> Path:
    """Write the synthetic raw files (site table, HH and DD files) under `work/raw`; returns that folder."""
    raw = work / "raw"
    synthesize_fluxnet.write(raw, synthesize_fluxnet.Params(n_sites=n_sites, first_year=first_year,
                                                            last_year=last_year))
    return raw


def hh_files(raw: Path) -> list[Path]:
    """The half-hourly (`_HH_`) files under `raw`, in path order."""
    return sorted(raw.glob(HH_GLOB))


def text_megabytes(raw: Path) -> float:
    """Size of the half-hourly text the paths read, in MB."""
    return round(sum(path.stat().st_size for path in hh_files(raw)) / 1e6, 1)


def run_scibench(raw: Path, out: Path) -> int:
    """The pipeline's own path (ingest@fluxnet_ch4); returns the half-hourly rows written."""
    from stages.ingest import ingest

    manifest = ingest("fluxnet_ch4", raw, INGEST_PARAMS, out)
    return manifest["tables"]["halfhourly"]["rows"]


def run_pandas_loop(raw: Path, out: Path) -> int:
    """Reference (a): one `pd.read_csv` per HH file, a site column, concatenated, one Parquet file."""
    import pandas as pd

    frames = []
    for path in hh_files(raw):
        frame = pd.read_csv(path, na_values=[-9999])
        frame["TIMESTAMP_START"] = pd.to_datetime(frame["TIMESTAMP_START"].astype(str), format="%Y%m%d%H%M")
        frame["site_id"] = path.name.split("_")[1]
        frames.append(frame)
    out.mkdir(parents=True, exist_ok=True)
    halfhourly = pd.concat(frames, ignore_index=True)
    halfhourly.to_parquet(out / "halfhourly.parquet")
    return len(halfhourly)


def run_polars_floor(raw: Path, out: Path) -> int:
    """Reference (b): a lazy multi-file scan of the HH files straight to Parquet (union of columns)."""
    import polars as pl

    files = hh_files(raw)
    out.mkdir(parents=True, exist_ok=True)
    scan = pl.scan_csv(files, infer_schema_files=len(files), missing_columns="insert",
                       extra_columns="raise", include_file_paths="path")
    scan.sink_parquet(out / "halfhourly.parquet")
    return pl.scan_parquet(out / "halfhourly.parquet").select(pl.len()).collect().item()


RUNNERS: dict[str, Callable[[Path, Path], int]] = {
    "scibench": run_scibench, "pandas_loop": run_pandas_loop, "polars_floor": run_polars_floor,
}


def measure(name: str, raw: Path, out: Path) -> dict:
    """Run one path in a fresh process; its wall time, CPU time (user + system), peak RSS and rows."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "stages.bench_fluxnet", "--one", name, str(raw), str(out)],
                             stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"bench path {name} failed")
    rows = int(child.stdout.read().strip().splitlines()[-1])
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "rows": rows}


def bench(raw: Path, work: Path, repeat: int = 1) -> dict:
    """Run every path on the files under `raw` (outputs under `work`) and compute the ratios.

    With `repeat` > 1 the paths take turns and each keeps its fastest run (a shared machine's
    other load only ever adds time).
    """
    runs: dict[str, list[dict]] = {name: [] for name in PATHS}
    for _ in range(repeat):
        for name in PATHS:
            runs[name].append(measure(name, raw, work / name))
    results = {name: min(runs[name], key=lambda run: run["seconds"]) for name in PATHS}
    ours, pandas_s, floor_s = (results[name]["seconds"] for name in PATHS)
    return {
        "text_mb": text_megabytes(raw), **results,
        "speedup_vs_pandas_loop": round(pandas_s / ours, 2),
        "ratio_to_polars_floor": round(ours / floor_s, 2),
    }


def main() -> None:
    """`python -m stages.bench_fluxnet` (40 sites x 2009-2018 by default; `--raw` reuses files)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", nargs=3, metavar=("PATH", "RAW", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--sites", type=int, default=40)
    parser.add_argument("--years", type=int, nargs=2, default=(2009, 2018))
    parser.add_argument("--raw", type=Path, help="existing raw folder (skip generating)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per path; the fastest is kept")
    args = parser.parse_args()
    if args.one:
        name, raw, out = args.one
        print(RUNNERS[name](Path(raw), Path(out)))
        return
    with tempfile.TemporaryDirectory(prefix="scibench-bench-fluxnet-") as work:
        raw = args.raw or prepare(Path(work), args.sites, *args.years)
        results = bench(raw, Path(work), args.repeat)
    for name in PATHS:
        run = results[name]
        print(f"{name:>13}: {run['seconds']:7.2f} s  cpu {run['cpu_seconds']:7.2f} s  peak {run['peak_rss_mb']:8.1f} MB"
              f"  rows {run['rows']}")
    print(f"text {results['text_mb']} MB; scibench is {results['speedup_vs_pandas_loop']}x the pandas loop "
          f"(target >= 4) and {results['ratio_to_polars_floor']}x the polars floor (target <= 1.5)")


if __name__ == "__main__":
    main()
