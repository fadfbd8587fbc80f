"""Synthetic FLUXNET-CH4 v1.0 raw files in the native layout, from a Q10 / water-table methane model.

Writes under `out_dir` exactly what `stages.sources.fluxnet_ch4` reads::

    FLX_AA-Flx_CH4-META_20201112135337801132.csv         site table (lat/lon, UTC offset, class)
    FLX_<SITE>_FLUXNET-CH4_<Y1>-<Y2>_1-1/FLX_<SITE>_FLUXNET-CH4_HH_<Y1>-<Y2>_1-1.csv
    FLX_<SITE>_FLUXNET-CH4_<Y1>-<Y2>_1-1/FLX_<SITE>_FLUXNET-CH4_DD_<Y1>-<Y2>_1-1.csv

Wetland sites (`sites`) are simulated on their own grid (half-hourly; every eighth
site hourly, in an `_HH_` file as in the product) with `model`; instrument gaps, gap
filling, QC flags and the daily aggregation follow `processing`. Files look like the
real ones: a single header row, LF endings, `-9999` for missing values, shortest round-trip float
text (Python `repr`), QC flags as `1.0`/`3.0`. The DD file is computed from the HH values as
written. One site at a time is simulated and written (memory bounded by the longest site).
Same params -> byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from pydantic import Field

from stages.synthesize.common import SeededYears
from stages.synthesize.fluxnet_ch4 import model, processing
from stages.synthesize.fluxnet_ch4.sites import Site, draw_sites, write_metadata

ALWAYS = ("NEE", "H", "LE", "FCH4", "USTAR", "SW_IN", "VPD", "PA", "TA", "TS_1", "WS")
MEASURED_ORDER = ("NEE", "H", "LE", "FCH4", "USTAR", "SW_IN", "SW_OUT", "LW_IN", "LW_OUT", "NETRAD",
                  "PPFD_IN", "VPD", "RH", "PA", "TA", "P", "D_SNOW", "TS_1", "TS_2", "TS_3", "TS_4",
                  "G", "WTD", "GPP_NT", "RECO_NT", "GPP_DT", "RECO_DT", "WD", "WS")
FILLED_ORDER = ("NEE_F", "H_F", "LE_F", "FCH4_F", "SW_IN_F", "SW_OUT_F", "LW_IN_F", "LW_OUT_F",
                "NETRAD_F", "PPFD_IN_F", "VPD_F", "RH_F", "PA_F", "TA_F", "P_F", "D_SNOW_F", "G_F",
                "WTD_F", "WS_F")
ANN = ("LE_F_ANNOPTLM", "NEE_F_ANNOPTLM", "FCH4_F_ANNOPTLM")
HH_ONLY = ("FCH4_F_RANDUNC", "FCH4_F_ANNOPTLM_UNC")
QC = "FCH4_F_ANNOPTLM_QC"


class Params(SeededYears):
    """Parameters of `synthesize@fluxnet_ch4`."""

    n_sites: int = Field(ge=1, le=500)


def write(out_dir: Path, params: Params) -> None:
    """Generate the site table and every site's HH and DD file under `out_dir`."""
    sites = draw_sites(params.seed, params.n_sites, params.first_year, params.last_year)
    write_metadata(out_dir, sites)
    for site in sites:
        n_days = int((site.last_day - site.first_day).astype(int)) + 1
        grid = model.Grid(site.first_day, n_days, site.step_min)
        halfhourly = simulate_site(site, grid, np.random.default_rng([params.seed, 1, site.index]))
        _write_site(out_dir, site, grid, halfhourly)


def site_columns(site: Site) -> tuple[list[str], list[str]]:
    """The site's variable columns in file order: (HH file, DD file), timestamps excluded."""
    measured = [name for name in MEASURED_ORDER if name in ALWAYS or name in site.measured
                or (name.startswith("TS_") and int(name[3:]) <= site.n_ts)]
    filled = [name for name in FILLED_ORDER
              if name.removesuffix("_F") in processing.ERA_FILLED or name.removesuffix("_F") in measured]
    return [*measured, *filled, *ANN, *HH_ONLY, QC], [*measured, *filled, *ANN, QC]


def simulate_site(site: Site, grid: model.Grid, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every HH column of the site as written (rounded; NaN where the file holds -9999)."""
    met = model.weather(grid, site.climate, rng)
    ts = model.soil_temperatures(grid, met["TA"], offset_c=1.0)
    swe_day, wtd_day = model.water_balance(grid, met["TA"], met["precip_day"], site.water)
    swe, wtd = model.to_grid(grid, swe_day), model.to_grid(grid, wtd_day)
    flows = model.energy_and_carbon(met, ts, swe, site.carbon, rng)
    ch4 = model.methane(ts[0], wtd, grid.hour(), model.substrate(grid, ts[0]), site.flux)
    ch4_day = ch4 * model.daily_anomaly(grid, rng, site.flux["day_sigma"])
    truth = met | flows | {f"TS_{k + 1}": t for k, t in enumerate(ts)} | {"WTD": wtd, "D_SNOW": swe / 3,
                                                                          "FCH4": ch4_day}
    night_calm = (met["SW_IN"] == 0) & (met["USTAR"] < 0.08)
    masks = processing.gap_masks(grid, rng, site.zone == "boreal", night_calm)
    size = grid.size
    noise = {
        "FCH4": ch4_day * np.exp(0.25 * rng.standard_normal(size) - 0.03125) + rng.standard_normal(size),
        "NEE": flows["NEE"] + (0.3 + 0.15 * np.abs(flows["NEE"])) * rng.standard_normal(size),
        "WTD": wtd + 0.003 * rng.standard_normal(size),
    } | {f"TS_{k + 1}": t + 0.05 * rng.standard_normal(size) for k, t in enumerate(ts)}
    hh_columns, _ = site_columns(site)
    out: dict[str, np.ndarray] = {}
    for name in hh_columns:
        if name in MEASURED_ORDER:
            mask = masks[processing.GROUP.get(name, "soil" if name.startswith("TS_") else "met")]
            if name == "NEE":
                mask = mask & ~night_calm
            value = noise.get(name, truth.get(name))
            if value is not None:
                out[name] = processing.round_column(name, np.where(mask, value, np.nan))
    for name in hh_columns:
        base = name.removesuffix("_F")
        if name in FILLED_ORDER and base in processing.ERA_FILLED:
            filled = processing.era_fill(grid, base, out.get(base), truth[base], rng)
            out[name] = processing.round_column(name, filled)
        elif name in FILLED_ORDER:
            out[name] = processing.round_column(name, processing.mds_fill(grid, out[base]))
    smooth = {n: model.to_grid(grid, model.daily_ar1(rng, grid.n_days, 0.8, 1.0)) for n in ANN}
    ann = {"FCH4_F_ANNOPTLM": ch4 * np.exp(0.1 * smooth["FCH4_F_ANNOPTLM"]),
           "NEE_F_ANNOPTLM": flows["NEE"] + 0.3 * smooth["NEE_F_ANNOPTLM"],
           "LE_F_ANNOPTLM": flows["LE"] + 5 * smooth["LE_F_ANNOPTLM"]}
    out |= {name: processing.round_column(name, values) for name, values in ann.items()}
    out["FCH4_F_RANDUNC"] = processing.round_column("FCH4_F_RANDUNC", 0.15 * np.abs(out["FCH4_F"]) + 1.0)
    out["FCH4_F_ANNOPTLM_UNC"] = processing.round_column(
        "FCH4_F_ANNOPTLM_UNC", 0.1 * np.abs(out["FCH4_F_ANNOPTLM"]) + 0.5)
    out[QC] = np.where(np.isnan(out["FCH4_F"]), 3.0, 1.0)
    _partition(out, hh_columns, flows, site, rng, grid)
    return {name: out[name] for name in hh_columns}


def _partition(out: dict[str, np.ndarray], columns: list[str], flows: dict[str, np.ndarray], site: Site,
               rng: np.random.Generator, grid: model.Grid) -> None:
    """Night-time (NT) and daytime (DT) partitioning of NEE_F into GPP and RECO estimates."""
    growing_reco = flows["RECO"] / site.carbon["r10"]
    if "RECO_NT" in columns:
        reco = site.carbon["r10"] * (1 + 0.1 * rng.standard_normal()) * growing_reco
        reco = np.where(np.isnan(out["NEE_F"]), np.nan, reco)
        out["RECO_NT"] = processing.round_column("RECO_NT", reco)
        out["GPP_NT"] = processing.round_column("GPP_NT", reco - out["NEE_F"])
    if "RECO_DT" in columns:
        error = model.to_grid(grid, model.daily_ar1(rng, grid.n_days, 0.8, 0.05))
        out["RECO_DT"] = processing.round_column("RECO_DT", flows["RECO"] * (1 + error))
        out["GPP_DT"] = processing.round_column("GPP_DT", flows["GPP"] * (1 - error))


def stamps(times: np.ndarray, digits: int) -> np.ndarray:
    """datetime64 values as YYYYMMDD (8 digits) or YYYYMMDDHHMM (12 digits) integers."""
    days = times.astype("datetime64[D]")
    months = days.astype("datetime64[M]")
    year = months.astype("datetime64[Y]").astype(np.int64) + 1970
    month = months.astype(np.int64) % 12 + 1
    day = (days - months.astype("datetime64[D]")).astype(np.int64) + 1
    date = year * 10000 + month * 100 + day
    if digits == 8:
        return date
    minutes = (times.astype("datetime64[m]") - days.astype("datetime64[m]")).astype(np.int64)
    return date * 10000 + minutes // 60 * 100 + minutes % 60


def format_floats(values: np.ndarray) -> pl.Series:
    """Python `repr` text of each float (shortest round trip), `-9999` where NaN."""
    text = pl.Series(values, nan_to_null=True).cast(pl.String).fill_null("-9999")
    small = np.flatnonzero((np.abs(values) < 1e-4) & (values != 0))  # repr switches to e-notation
    if len(small):
        text = text.scatter(small, [repr(float(values[i])) for i in small])
    return text


def _write_site(out_dir: Path, site: Site, grid: model.Grid, halfhourly: dict[str, np.ndarray]) -> None:
    y1, y2 = site.years
    folder = out_dir / f"FLX_{site.site_id}_FLUXNET-CH4_{y1}-{y2}_1-1"
    folder.mkdir(parents=True, exist_ok=True)
    start = (np.datetime64(grid.first_day, "m") + np.arange(grid.size) * grid.step_min)
    hh = {"TIMESTAMP_START": pl.Series(stamps(start, 12)),
          "TIMESTAMP_END": pl.Series(stamps(start + grid.step_min, 12))}
    hh |= {name: format_floats(values) for name, values in halfhourly.items()}
    _write_csv(folder / f"FLX_{site.site_id}_FLUXNET-CH4_HH_{y1}-{y2}_1-1.csv", hh)
    _, dd_columns = site_columns(site)
    dd = {"TIMESTAMP": pl.Series(stamps(grid.days(), 8))}
    dd |= {name: format_floats(processing.daily_values(grid, name, halfhourly[name])) for name in dd_columns}
    _write_csv(folder / f"FLX_{site.site_id}_FLUXNET-CH4_DD_{y1}-{y2}_1-1.csv", dd)


def _write_csv(path: Path, columns: dict[str, pl.Series]) -> None:
    frame = pl.DataFrame([series.alias(name) for name, series in columns.items()])
    path.write_bytes(frame.write_csv(line_terminator="\n", quote_style="never").encode("ascii"))
