r"""`make bench`: full-scale CAMELS ingest against two references, measured in one run.

- `scibench`: ingest@camels_us + align@camels (read, validate, join, write the aligned repository);
- `pandas_loop`: the per-file `pandas.read_csv(sep=r"\s+")` loop hydrologists write, into one frame
  and one Parquet file (forcing and streamflow);
- `polars_floor`: a lazy multi-file scan of the same files straight to Parquet, no joins or checks.

Each runs in a fresh process; wall time and that process's peak resident memory are recorded.
Results and ratios go to processed/metrics/bench.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stages.hashing import write_json
from stages.layout import METRICS
from stages.synthesize import camels_us as synthesize_camels

PATHS = ("scibench", "pandas_loop", "polars_floor")
FORCING_COLUMNS = ["ymdh", "dayl_s", "prcp_mm_d", "srad_w_m2", "swe_mm", "tmax_c", "tmin_c", "vp_pa"]


def run_scibench(raw: Path, out: Path) -> int:
    """The pipeline's own path; returns the number of time-series rows written."""
    from stages.align import align
    from stages.ingest import ingest

    ingest("camels_us", raw, {"forcing": "daymet"}, out / "sources" / "camels_us")
    manifest = align("camels", ["camels_us"], out / "sources", out / "repositories" / "camels")
    return manifest["tables"]["timeseries"]["rows"]


def run_pandas_loop(raw: Path, out: Path) -> int:
    r"""Reference (a): one `read_csv(sep=r"\s+")` per file, concatenated, one Parquet file each."""
    import pandas as pd

    forcing = []
    for path in sorted(raw.glob("basin_mean_forcing/daymet/*/*_forcing_leap.txt")):
        frame = pd.read_csv(path, sep=r"\s+", skiprows=3)
        frame["gauge_id"] = path.name[:8]
        forcing.append(frame)
    flows = [pd.read_csv(path, sep=r"\s+", header=None, dtype={0: str})
             for path in sorted(raw.glob("usgs_streamflow/*/*_streamflow_qc.txt"))]
    out.mkdir(parents=True, exist_ok=True)
    forcing_frame = pd.concat(forcing, ignore_index=True)
    forcing_frame.to_parquet(out / "forcing.parquet")
    pd.concat(flows, ignore_index=True).to_parquet(out / "streamflow.parquet")
    return len(forcing_frame)


def run_polars_floor(raw: Path, out: Path) -> int:
    """Reference (b): lazy multi-file scans straight to Parquet (no date parsing, joins or checks)."""
    import polars as pl

    out.mkdir(parents=True, exist_ok=True)
    forcing = pl.scan_csv(sorted(raw.glob("basin_mean_forcing/daymet/*/*_forcing_leap.txt")),
                          separator="\t", has_header=False, skip_rows=4, new_columns=FORCING_COLUMNS,
                          include_file_paths="path")
    forcing.sink_parquet(out / "forcing.parquet")
    flows = pl.scan_csv(sorted(raw.glob("usgs_streamflow/*/*_streamflow_qc.txt")), has_header=False,
                        new_columns=["line"], separator="\x1f")
    flows.sink_parquet(out / "streamflow.parquet")
    return pl.scan_parquet(out / "forcing.parquet").select(pl.len()).collect().item()


RUNNERS = {"scibench": run_scibench, "pandas_loop": run_pandas_loop, "polars_floor": run_polars_floor}


def measure(name: str, raw: Path, out: Path) -> dict:
    """Run one path in a fresh process; its wall time, peak RSS and rows."""
    start = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "stages.bench", "--one", name, str(raw), str(out)],
                             stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"bench path {name} failed")
    rows = int(child.stdout.read().strip().splitlines()[-1])
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "rows": rows}


def text_megabytes(raw: Path) -> float:
    """Size of the forcing and streamflow text the paths read."""
    files = [*raw.glob("basin_mean_forcing/daymet/*/*.txt"), *raw.glob("usgs_streamflow/*/*.txt")]
    return round(sum(p.stat().st_size for p in files) / 1e6, 1)


def bench(n_basins: int, first_year: int, last_year: int, work: Path) -> dict:
    """Generate the synthetic files once, run every path on them, and compute the ratios."""
    raw = work / "raw"
    synthesize_camels.write(raw, synthesize_camels.Params(n_basins=n_basins, first_year=first_year,
                                                          last_year=last_year))
    results = {name: measure(name, raw, work / name) for name in PATHS}
    ours, pandas_s, floor_s = (results[n]["seconds"] for n in PATHS)
    return {
        "camels_us": {
            "basins": n_basins, "years": [first_year, last_year], "text_mb": text_megabytes(raw),
            **results,
            "speedup_vs_pandas_loop": round(pandas_s / ours, 2),
            "ratio_to_polars_floor": round(ours / floor_s, 2),
        }
    }


def main() -> None:
    """`python -m stages.bench` (full CAMELS size by default; `--basins/--years` to shrink)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--one", nargs=3, metavar=("PATH", "RAW", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--basins", type=int, default=671)
    parser.add_argument("--years", type=int, nargs=2, default=(1980, 2014))
    parser.add_argument("--out", type=Path, default=METRICS / "bench.json")
    args = parser.parse_args()
    if args.one:
        name, raw, out = args.one
        print(RUNNERS[name](Path(raw), Path(out)))
        return
    with tempfile.TemporaryDirectory(prefix="scibench-bench-") as work:
        results = bench(args.basins, *args.years, Path(work))
    write_json(args.out, results)
    camels = results["camels_us"]
    for name in PATHS:
        print(f"{name:>13}: {camels[name]['seconds']:7.2f} s  peak {camels[name]['peak_rss_mb']:8.1f} MB"
              f"  rows {camels[name]['rows']}")
    print(f"text {camels['text_mb']} MB; scibench is {camels['speedup_vs_pandas_loop']}x the pandas loop "
          f"(target >= 4) and {camels['ratio_to_polars_floor']}x the polars floor (target <= 1.5)")


if __name__ == "__main__":
    main()
