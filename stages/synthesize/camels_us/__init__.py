"""Synthetic CAMELS-US raw files in the native layout, from a snow + bucket hydrological model.

Writes under `out_dir` exactly what `stages.sources.camels_us` reads (daymet product only)::

    basin_mean_forcing/daymet/<huc>/<gauge>_lump_cida_forcing_leap.txt
    usgs_streamflow/<huc>/<gauge>_streamflow_qc.txt
    camels_attributes_v2.0/camels_{name,topo,clim,hydro,soil,geol,vege}.txt

Basins are spread over five HUC-02 regions with distinct regimes (humid New England, humid
rain-fed Southeast, semi-arid flashy Great Plains, snow-dominated Rockies, wet-winter Pacific
Northwest). Static attributes are drawn per region; the model parameters follow from them (soil
capacity from soil depth and porosity, quick-flow share from slope, permeability and clay), and
the climate and hydrological attributes are computed from the written series, so the files carry
the structure that large-sample analyses look for. Basins vary within a region about as much as
between regions.

The files are not the truth: the model runs on the true weather with slowly drifting parameters,
while the files publish precipitation with gauge undercatch and random error, temperature with
error, a modelled SWE product and discharge with rating-curve error (`errors`). So the
generator's own model with each basin's true parameters, run on the published forcing, reaches a
median NSE of about 0.8-0.9, not 1 (`realism` measures it). Same params ->
byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from pydantic import Field
from scipy.signal import lfilter

from stages.synthesize.camels_us import errors, model, signatures
from stages.synthesize.camels_us.basins import Basins, draw_basins, write_attributes
from stages.synthesize.common import SeededYears

FT3_TO_M3 = 0.0283168  # as in the reader: mm/d = cfs * FT3_TO_M3 * 86400 / area_m2 * 1000
CHUNK = 64  # basins simulated together; bounds memory, does not change any value
FORCING_HEADER = "Year Mnth Day Hr dayl(s) prcp(mm/day) srad(W/m2) swe(mm) tmax(C) tmin(C) vp(Pa)"


class Params(SeededYears):
    """Parameters of `synthesize@camels_us`."""

    n_basins: int = Field(ge=1, le=9000)
    gap_fraction: float = Field(0.02, ge=0.0, le=0.5)


def write(out_dir: Path, params: Params) -> None:
    """Generate every raw file of the synthetic CAMELS-US source under `out_dir`."""
    days = calendar(params)
    stamps = [f"{y} {m:02d} {d:02d}"
              for y, m, d in zip(days["year"], days["month"], days["day"], strict=True)]
    basins = draw_basins(params.seed, params.n_basins)
    derived: dict[str, list[np.ndarray]] = {}
    for start in range(0, params.n_basins, CHUNK):
        chunk = np.arange(start, min(start + CHUNK, params.n_basins))
        s = simulate(params, basins, chunk)
        _write_series(out_dir, basins, chunk, s, stamps)
        clim = signatures.climate_indices(days["doy"], days["month"], s["prcp"], s["tmean"],
                                          s["pet"])
        hydro = signatures.hydrological_signatures(days["year"], days["month"], s["q_obs_mm_d"],
                                                   s["prcp"])
        for name, values in (clim | hydro).items():
            derived.setdefault(name, []).append(values)
    write_attributes(out_dir, basins, {name: np.concatenate(v) for name, v in derived.items()})


def calendar(params: Params) -> dict[str, np.ndarray]:
    """Year, month, day of month and day of year of every day of the record."""
    dates = np.arange(np.datetime64(f"{params.first_year}-01-01"),
                      np.datetime64(f"{params.last_year + 1}-01-01"))
    return {"year": dates.astype("datetime64[Y]").astype(int) + 1970,
            "month": dates.astype("datetime64[M]").astype(int) % 12 + 1,
            "day": (dates - dates.astype("datetime64[M]")).astype(int) + 1,
            "doy": (dates - dates.astype("datetime64[Y]")).astype(int) + 1}


def simulate(params: Params, basins: Basins, chunk: np.ndarray) -> dict[str, np.ndarray]:
    """True and published series of the basins at positions `chunk`, arrays (days, basins).

    The model runs on the true weather (`true_prcp`, `true_tmean`) with drifting parameters and
    gives `true_swe` and `true_q_mm_d`; the other keys are what the files publish (rounded as
    written; `q_obs_mm_d` is NaN on gaps) plus `pet` of the published temperature.
    """
    doy = calendar(params)["doy"]
    n_days = len(doy)
    regional = {  # weather innovations shared by the basins of a region
        huc: np.random.default_rng([params.seed, 2, int(huc)]).standard_normal((n_days, 3))
        for huc in sorted(set(basins.huc[chunk]))
    }
    local = np.empty((n_days, len(chunk), 3))
    gaps = np.zeros((n_days, len(chunk)), dtype=bool)
    for column, index in enumerate(chunk):
        rng = np.random.default_rng([params.seed, 1, int(index)])
        local[:, column, :2] = rng.standard_normal((n_days, 2))
        local[:, column, 2] = rng.standard_gamma(basins.gamma_shape[index], n_days)
        gaps[:, column] = _gap_mask(rng, n_days, params.gap_fraction)
    rngs = [np.random.default_rng([params.seed, 3, int(index)]) for index in chunk]
    climate, catchment = basins.model_parameters(chunk)
    region_noise = np.stack([regional[huc] for huc in basins.huc[chunk]], axis=1)
    noise = model.mix_innovations(local, region_noise, basins.gamma_shape[chunk])
    true = model.simulate_weather(doy, climate, noise)
    drift = errors.draw_drift(rngs, n_days)
    true_swe, q = model.simulate_runoff(true["prcp"], true["tmean"], true["pet"], catchment, drift)
    series = {"true_prcp": true["prcp"], "true_tmean": true["tmean"], "true_swe": true_swe,
              "true_q_mm_d": q}
    prcp = errors.published_precipitation(rngs, true["prcp"], true["tmean"],
                                          basins.static["frac_forest"][chunk])
    tmax, tmin = errors.published_temperature(rngs, true["tmax"], true["tmin"])
    series |= {"prcp": _round2(prcp), "tmax": _round2(tmax), "tmin": _round2(tmin)}
    series |= {name: _round2(values) for name, values in
               model.derived_forcing(doy, climate, series["tmax"], series["tmin"]).items()}
    series["tmean"] = (series["tmax"] + series["tmin"]) / 2
    series["pet"] = published_pet(doy, climate.lat_deg, series["tmax"], series["tmin"])
    swe = errors.modelled_swe(rngs, series["prcp"], series["tmean"], catchment.ddf_mm_c_d)
    series["swe"] = _round2(swe)
    error = errors.rating_error(rngs, n_days)
    area_m2 = basins.header_area_m2[chunk]
    cfs = _usgs_round(q * np.exp(error) * area_m2 / (FT3_TO_M3 * 86400 * 1000))
    series["cfs"] = np.where(gaps, -999.0, cfs)
    series["q_obs_mm_d"] = np.where(gaps, np.nan, cfs * FT3_TO_M3 * 86400 / area_m2 * 1000)
    cold = lfilter(np.ones(3) / 3, [1], series["tmean"], axis=0) < -5  # ice-affected days
    series["flag"] = np.where(gaps, "M", np.where(cold, "A:e", "A"))
    return series


def published_pet(doy: np.ndarray, lat_deg: np.ndarray, tmax: np.ndarray,
                  tmin: np.ndarray) -> np.ndarray:
    """Hargreaves PET (mm/d) of published temperatures, as the generator's model computes it."""
    ra = model.extraterrestrial_radiation(lat_deg, doy)
    return model.hargreaves_pet(ra, (tmax + tmin) / 2, tmax - tmin)


def _gap_mask(rng: np.random.Generator, n_days: int, fraction: float) -> np.ndarray:
    """Runs of missing days (1 day to ~2 months, median ~10 d) covering about `fraction`."""
    mask = np.zeros(n_days, dtype=bool)
    target = int(round(fraction * n_days))
    while mask.sum() < target:
        length = int(np.clip(rng.lognormal(np.log(10), 0.8), 1, min(60, target - mask.sum())))
        start = int(rng.integers(0, max(n_days - length, 0) + 1))
        mask[start:start + length] = True
    return mask


def _round2(values: np.ndarray) -> np.ndarray:
    return np.round(values, 2) + 0.0  # + 0.0 turns -0.0 into 0.0, so no "-0.00" is written


def _usgs_round(cfs: np.ndarray) -> np.ndarray:
    """Three significant digits, at most two decimals, as USGS publishes daily values."""
    magnitude = np.floor(np.log10(np.maximum(cfs, 1e-12)))
    scale = 10.0 ** np.minimum(2 - magnitude, 2)
    return np.round(cfs * scale) / scale + 0.0


def _write_series(out_dir: Path, basins: Basins, chunk: np.ndarray, series: dict[str, np.ndarray],
                  stamps: list[str]) -> None:
    """Write the forcing and streamflow file of every basin in the chunk."""
    forcing_stamps = pl.Series("date", [stamp + " 12" for stamp in stamps])
    flow_stamps = pl.Series("date", stamps)
    names = ("dayl", "prcp", "srad", "swe", "tmax", "tmin", "vp")
    for column, index in enumerate(chunk):
        gauge, huc = basins.gauge_id[index], basins.huc[index]
        header = (f"{basins.header_lat_deg[index]:7.2f}\n{basins.header_elev_m[index]:7.2f}\n"
                  f"{basins.header_area_m2[index]:10d}\n{FORCING_HEADER}\n")
        table = pl.DataFrame([forcing_stamps] + [pl.Series(n, series[n][:, column]) for n in names])
        body = table.write_csv(separator="\t", float_precision=2, include_header=False)
        _write_text(out_dir / "basin_mean_forcing" / "daymet" / huc
                    / f"{gauge}_lump_cida_forcing_leap.txt", header + body)
        cents = np.rint(series["cfs"][:, column] * 100).astype(np.int64)
        flags = pl.Series("flag", series["flag"][:, column].tolist())
        _write_text(out_dir / "usgs_streamflow" / huc / f"{gauge}_streamflow_qc.txt",
                    _streamflow_text(gauge, flow_stamps, cents, flags))


def _streamflow_text(gauge: str, stamps: pl.Series, cents: np.ndarray, flags: pl.Series) -> str:
    """Rows `GAUGE YYYY MM DD`, a space, discharge as `%8.2f`, a space and the flag (polars)."""
    size = pl.col("cents").abs()
    value = pl.concat_str([
        pl.when(pl.col("cents") < 0).then(pl.lit("-")).otherwise(pl.lit("")),
        (size // 100).cast(pl.String), pl.lit("."), (size % 100).cast(pl.String).str.zfill(2),
    ]).str.pad_start(8)
    frame = pl.DataFrame([stamps, pl.Series("cents", cents), flags])
    parts = [pl.lit(gauge + " "), pl.col("date"), pl.lit(" "), value, pl.lit(" "), pl.col("flag")]
    return "\n".join(frame.select(pl.concat_str(parts)).to_series().to_list()) + "\n"


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("ascii"))
