r"""CAMELS-US paths of `make bench`: 671 basins x 1980-2014 of forcing, streamflow and attributes.

- `scibench`: ingest@camels_us + align@camels (read, validate, join, write the aligned repository);
- `pandas_loop`: the per-file `pandas.read_csv(sep=r"\s+")` loop hydrologists write (neuralhydrology's
  CAMELS-US loader: dates from Year/Mnth/Day, discharge in mm/d joined per basin), into one frame and
  one Parquet file;
- `polars_floor`: a lazy multi-file scan of the same files straight to Parquet, no joins or checks.
"""

from __future__ import annotations

from pathlib import Path

FORCING_COLUMNS = ["ymdh", "dayl_s", "prcp_mm_d", "srad_w_m2", "swe_mm", "tmax_c", "tmin_c", "vp_pa"]


def prepare(work: Path, n_basins: int = 671, first_year: int = 1980, last_year: int = 2014) -> Path:
    """Write the synthetic raw files once under `work/raw`; returns that folder."""
    raw = work / "raw"
    from stages.synthesize import camels_us as synthesize_camels  # here: the timed paths do not load it

    synthesize_camels.write(raw, synthesize_camels.Params(n_basins=n_basins, first_year=first_year,
                                                          last_year=last_year))
    return raw


def run_scibench(raw: Path, out: Path) -> int:
    """The pipeline's own path; returns the number of time-series rows written."""
    from stages.align import align
    from stages.ingest import ingest

    ingest("camels_us", raw, {"forcing": "daymet"}, out / "sources" / "camels_us")
    manifest = align("camels", ["camels_us"], out / "sources", out / "repositories" / "camels")
    return manifest["tables"]["timeseries"]["rows"]


def run_pandas_loop(raw: Path, out: Path) -> int:
    r"""Reference (a): neuralhydrology's CAMELS-US loader pattern, basin by basin, into one Parquet file.

    Per basin: `read_csv(sep=r"\s+")` of the forcing file after its three header lines, dates
    built from Year/Mnth/Day, discharge read the same way, converted to mm/d with the header area
    and joined on the date index; the attribute files joined on gauge_id.
    """
    import pandas as pd

    def dated(frame: pd.DataFrame) -> pd.DataFrame:
        text = frame.Year.map(str) + "/" + frame.Mnth.map(str) + "/" + frame.Day.map(str)
        return frame.set_index(pd.to_datetime(text, format="%Y/%m/%d").rename("date"))

    forcing_dir, flow_dir = raw / "basin_mean_forcing" / "daymet", raw / "usgs_streamflow"
    frames = []
    for path in sorted(forcing_dir.glob("**/*_forcing_leap.txt")):
        basin = path.name[:8]
        with path.open() as handle:
            handle.readline()
            handle.readline()
            area = float(handle.readline())
            frame = dated(pd.read_csv(handle, sep=r"\s+"))
        flow_path = next(flow_dir.glob(f"**/{basin}_streamflow_qc.txt"))
        flow = dated(pd.read_csv(flow_path, sep=r"\s+", header=None,
                                 names=["basin", "Year", "Mnth", "Day", "QObs", "flag"]))
        frame["QObs(mm/d)"] = 28316846.592 * flow.QObs * 86400 / (area * 10**6)
        frame["gauge_id"] = basin
        frames.append(frame)
    attributes = [pd.read_csv(path, sep=";", index_col="gauge_id", dtype={"gauge_id": str})
                  for path in sorted((raw / "camels_attributes_v2.0").glob("camels_*.txt"))]
    out.mkdir(parents=True, exist_ok=True)
    pd.concat(attributes, axis=1).to_parquet(out / "attributes.parquet")
    daily = pd.concat(frames)
    daily.to_parquet(out / "daily.parquet")
    return len(daily)


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


def text_megabytes(raw: Path) -> float:
    """Size of the forcing and streamflow text the paths read."""
    files = [*raw.glob("basin_mean_forcing/daymet/*/*.txt"), *raw.glob("usgs_streamflow/*/*.txt")]
    return round(sum(p.stat().st_size for p in files) / 1e6, 1)
