"""Benchmark paths for FLUXNET-CH4 half-hourly ingest, measured on the same synthetic files.

- `scibench`: ingest@fluxnet_ch4 (read, validate, convert to UTC, write the source tables);
- `pandas_loop`: the per-file `pandas.read_csv(na_values=[-9999])` loop flux scientists write, with
  `TIMESTAMP_START` parsed as `%Y%m%d%H%M` and a site id column, concatenated into one frame and
  one Parquet file;
- `polars_floor`: one lazy multi-file `polars.scan_csv` of the same files straight to Parquet, no
  timestamp parsing, joins or checks.

Each runner takes the raw folder and an output folder and returns the number of half-hourly rows
it wrote; `benchmarks.ingest` runs each in a fresh process and measures it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

HH_GLOB = "**/FLX_*_FLUXNET-CH4_HH_*.csv"
INGEST_PARAMS = {"on_error": "raise", "time_reference": "utc", "unknown_columns": "keep",
                 "utc_offsets_h": {}}


def prepare(work: Path, n_sites: int = 40, first_year: int = 2009, last_year: int = 2018) -> Path:
    """Write the synthetic raw files (site table, HH and DD files) under `work/raw`; returns that folder."""
    raw = work / "raw"
    from stages.synthesize import fluxnet_ch4 as synthesize_fluxnet  # here: the timed paths do not load it

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
