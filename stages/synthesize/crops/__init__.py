"""Synthetic US corn-belt maize data in both native layouts read by `stages.sources.crops`.

Writes under `out_dir`::

    maize/US/{yield,meteo,fpar,ndvi,soil,crop_calendar}_maize_US.csv   CY-Bench layout, adm_id US-ss-ccc
    khaki/corn_samples.csv, khaki/Corn_Loc_ID.csv (CRLF)              Khaki et al. (2020) layout
    _truth.json                                                        hidden truth; readers ignore it

Both layouts describe the same counties and years: daily weather (`model`), dekadal FPAR and
~8-daily NDVI (scaled 50-250, a few `0.0` fills, rows unsorted as in the real file; MODIS products
only from 2001), and yields from weather (GDD, heat degree days, water stress), soil (awc) and
management (early planting, irrigation). Khaki weekly weather `W_1..W_6` is Daymet-style prcp
(mm/d), srad (W/m2), swe (kg/m2), tmax, tmin (degC), vp (Pa), weekly means of the same days;
yields are NASS-style bu/acre with 0.1 precision, CY-Bench yields their t/ha conversion. Early
planting is confounded with soil quality and wealth (`counties`): `_truth.json` records the
true average effect (from both potential outcomes of every county-year) next to the naive
difference of means. Same params -> byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from pydantic import Field

from stages.hashing import write_json
from stages.synthesize.common import SeededYears
from stages.synthesize.crops import model
from stages.synthesize.crops.counties import EARLY_SHIFT_DAYS, Counties, draw_counties, khaki_soil

BU_AC_T_HA = 56 * 0.45359237 / 0.40468564224 / 1000  # maize: 56 lb per bushel
MODIS_FIRST_YEAR = 2001
KHAKI_WEATHER = ("prcp_mm_d", "srad_w_m2", "swe_kg_m2", "tmax_c", "tmin_c", "vp_pa")
CANOPY_NOISE_T_HA = 0.7  # sd of the yield-equivalent canopy departure from the harvested yield
PROGRESS_WEEKS = 16  # corn: P_1..P_16, cumulative % planted by the end of each week from April 1


class Params(SeededYears):
    """Parameters of `synthesize@crops`."""

    n_counties: int = Field(ge=1, le=1105)
    missing_yield_fraction: float = Field(0.03, ge=0.0, le=0.5)
    ndvi_fill_fraction: float = Field(0.001, ge=0.0, le=0.1)


def write(out_dir: Path, params: Params) -> None:
    """Generate every raw file of the synthetic crops source under `out_dir`."""
    c = draw_counties(params.seed, params.n_counties)
    folder = out_dir / "maize" / "US"
    folder.mkdir(parents=True, exist_ok=True)
    (out_dir / "khaki").mkdir(parents=True, exist_ok=True)
    soil = khaki_soil(c, params.seed)
    swe = np.zeros(len(c))
    yields, effects = [], []
    handles = {name: (folder / f"{name}_maize_US.csv").open("wb") for name in ("meteo", "fpar", "ndvi")}
    handles["khaki"] = (out_dir / "khaki" / "corn_samples.csv").open("wb")
    first_modis = max(params.first_year, MODIS_FIRST_YEAR)
    try:
        for year in range(params.first_year, params.last_year + 1):
            weather = model.simulate_weather(params.seed, year, c, swe)
            swe = weather["swe"][-1]
            rng = np.random.default_rng([params.seed, 4, year])
            bushels, plant, effect = _harvest(c, year, weather, rng)
            observed = rng.random(len(c)) >= params.missing_yield_fraction
            area = np.round(c.area_ha * np.exp(rng.normal(0, 0.08, len(c))), 1)
            yields.append((year, bushels, observed, area))
            effects.append(effect[observed])
            dates = _dates(year, len(weather["tavg"]))
            _append(handles["meteo"], _meteo_frame(c, weather, dates), year == params.first_year)
            if year >= MODIS_FIRST_YEAR:
                # The canopy tracks the yield loosely: stand, weeds and lodging move one without the other.
                loose = np.random.default_rng([params.seed, 6, year]).normal(0, CANOPY_NOISE_T_HA, len(c))
                cover = model.canopy(np.arange(1, len(dates) + 1, dtype=float), plant, c.season_days,
                                     bushels * BU_AC_T_HA + loose)
                _append(handles["fpar"], _fpar_frame(c, cover, weather["swe"], dates, rng), year == first_modis)
                _append(handles["ndvi"], _ndvi_frame(c, cover, weather["swe"], dates, rng, params),
                        year == first_modis)
            khaki = _khaki_frame(c, year, weather, bushels, observed, soil, plant)
            _append(handles["khaki"], khaki, year == params.first_year)
    finally:
        for handle in handles.values():
            handle.close()
    for name in ("fpar", "ndvi"):  # no MODIS year in range: the files would be empty, so leave them out
        path = folder / f"{name}_maize_US.csv"
        if path.stat().st_size == 0:
            path.unlink()
    _write_static(out_dir, c, yields, params.seed)
    _write_truth(out_dir, c, yields, effects, params)


def _harvest(c: Counties, year: int, weather: dict[str, np.ndarray],
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Yield (bu/acre, 0.1 precision) and planting day under each county's practice, early-planting effect.

    The effect (t/ha) compares both potential outcomes of every county under the same weather and noise.
    """
    shift, local, noise = rng.normal(0, 3), rng.normal(0, 3, len(c)), rng.standard_normal(len(c))
    warmth = weather["spring_warmth"]
    outcomes = {}
    for early in (False, True):
        practice = np.full(len(c), early)
        plant = model.planting(c, shift, local, practice, warmth)
        stats = model.season(weather, plant, c.season_days, c.awc_cm_m)
        outcomes[early] = model.yield_t_ha(year, c, stats, practice, noise)
    bushels = np.round(np.where(c.early_planting, outcomes[True], outcomes[False]) / BU_AC_T_HA, 1)
    plant = model.planting(c, shift, local, c.early_planting.astype(float), warmth)
    return bushels, plant, outcomes[True] - outcomes[False]


def _dates(year: int, n_days: int) -> np.ndarray:
    days = np.datetime64(f"{year}-01-01") + np.arange(n_days)
    return np.char.replace(np.datetime_as_string(days, unit="D"), "-", "")


def _append(handle, frame: pl.DataFrame, header: bool) -> None:
    handle.write(frame.write_csv(include_header=header).encode("ascii"))


def _r(values: np.ndarray, digits: int) -> np.ndarray:
    return np.round(values, digits) + 0.0  # + 0.0 turns -0.0 into 0.0


def _grid(c: Counties, dates: np.ndarray, mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """crop_name, adm_id, date columns of a days x counties grid, date-major (as the real files)."""
    ids, days = np.tile(c.adm_id, len(dates)), np.repeat(dates, len(c))
    keep = np.ones(len(ids), bool) if mask is None else mask.reshape(-1)
    return {"crop_name": np.full(int(keep.sum()), "maize"), "adm_id": ids[keep], "date": days[keep]}


def _meteo_frame(c: Counties, w: dict[str, np.ndarray], dates: np.ndarray) -> pl.DataFrame:
    prec, et0 = _r(w["prec"], 3), _r(w["et0"], 3)
    values = {"tmin": _r(w["tmin"], 3), "tmax": _r(w["tmax"], 3), "prec": prec, "rad": _r(w["rad"], 3),
              "tavg": _r(w["tavg"], 3), "et0": et0, "vpd": _r(w["vpd"], 3), "cwb": _r(prec - et0, 3)}
    return pl.DataFrame(_grid(c, dates) | {k: v.reshape(-1) for k, v in values.items()})


def _fpar_frame(c: Counties, cover: np.ndarray, swe: np.ndarray, dates: np.ndarray,
                rng: np.random.Generator) -> pl.DataFrame:
    dekad = np.char.endswith(dates, "01") | np.char.endswith(dates, "11") | np.char.endswith(dates, "21")
    value = 6 + 84 * cover - 4 * (swe > 5) + rng.normal(0, 2.5, cover.shape)
    mask = np.broadcast_to(dekad[:, None], cover.shape)
    return pl.DataFrame(_grid(c, dates, mask) | {"fpar": _r(np.clip(value, 0, 100), 6)[mask]})


def _ndvi_frame(c: Counties, cover: np.ndarray, swe: np.ndarray, dates: np.ndarray,
                rng: np.random.Generator, params: Params) -> pl.DataFrame:
    day = np.arange(len(dates))[:, None]
    mask = (day >= c.ndvi_offset) & ((day - c.ndvi_offset) % 8 == 0) & (rng.random(cover.shape) > 0.04)
    background = 0.30 - 0.12 * (swe > 5)
    ndvi = background + (0.86 - background) * cover + rng.normal(0, 0.02, cover.shape)
    raw = _r(np.clip(50 + 200 * ndvi, 50.5, 250), 6)
    raw = np.where(rng.random(cover.shape) < params.ndvi_fill_fraction, 0.0, raw)
    frame = pl.DataFrame(_grid(c, dates, mask) | {"ndvi": raw[mask]})
    return frame[rng.permutation(len(frame))]  # the real NDVI files are not sorted


def _khaki_frame(c: Counties, year: int, w: dict[str, np.ndarray], bushels: np.ndarray,
                 observed: np.ndarray, soil: dict[str, np.ndarray], plant: np.ndarray) -> pl.DataFrame:
    daily = (w["prec"], w["rad"] / 86400, w["swe"], w["tmax"], w["tmin"], w["ea_hpa"] * 100)
    columns = {"loc_ID": c.loc_id, "year": np.full(len(c), year), "yield": bushels}
    for i, values in enumerate(daily, 1):
        weekly = values[:364].reshape(52, 7, len(c)).mean(axis=1)
        columns |= {f"W_{i}_{week}": _r(weekly[week - 1], 3) for week in range(1, 53)}
    columns |= {name: values + 0.0 for name, values in soil.items()}
    week_end = 91 + 7 * np.arange(1, PROGRESS_WEEKS + 1)[:, None]
    progress = np.rint(100 / (1 + np.exp(-(week_end - plant[None, :]) / 4))) + 0.0
    columns |= {f"P_{i}": progress[i - 1] for i in range(1, PROGRESS_WEEKS + 1)}
    order = np.argsort(c.loc_id[observed], kind="stable")
    return pl.DataFrame({name: np.asarray(v)[observed][order] for name, v in columns.items()})


def _write_static(out_dir: Path, c: Counties, yields: list, seed: int) -> None:
    folder = out_dir / "maize" / "US"
    years = np.concatenate([np.full(len(c), y[0]) for y in yields])
    bushels, observed, area = (np.concatenate([y[k] for y in yields]) for k in (1, 2, 3))
    ids = np.tile(c.adm_id, len(yields))
    t_ha = _r(bushels * BU_AC_T_HA, 4)
    table = pl.DataFrame({"crop_name": np.full(len(ids), "maize"), "country_code": np.full(len(ids), "US"),
                          "adm_id": ids, "harvest_year": years, "yield": t_ha, "harvest_area": area,
                          "production": _r(t_ha * area, 1)}).filter(pl.Series(observed))
    (folder / "yield_maize_US.csv").write_bytes(table.sort(["adm_id", "harvest_year"]).write_csv().encode())
    base = {"crop_name": np.full(len(c), "maize"), "adm_id": c.adm_id}
    soil = pl.DataFrame(base | {"awc": _r(c.awc_cm_m, 6), "bulk_density": _r(c.bulk_density, 6),
                                "drainage_class": c.drainage_class})
    (folder / "soil_maize_US.csv").write_bytes(soil.write_csv().encode())
    sos = _r(c.plant_doy, 4)
    calendar = pl.DataFrame(base | {"sos": sos, "eos": _r(sos + c.season_days + 25, 4)})
    (folder / "crop_calendar_maize_US.csv").write_bytes(calendar.write_csv().encode())
    unknown = np.random.default_rng([seed, 5]).random(len(c)) < 0.01  # failed geocoding, as in the real file
    order = np.argsort(c.loc_id)
    lookup = pl.DataFrame({"State": c.state, "County": c.name, "lat": np.where(unknown, 0.0, _r(c.lat, 7)),
                           "long": np.where(unknown, 0.0, _r(c.lon, 7)), "ID_loc": c.loc_id})[order]
    text = lookup.write_csv(line_terminator="\r\n")
    (out_dir / "khaki" / "Corn_Loc_ID.csv").write_bytes(text.encode())


def _write_truth(out_dir: Path, c: Counties, yields: list, effects: list, params: Params) -> None:
    t_ha = np.concatenate([y[1][y[2]] * BU_AC_T_HA for y in yields])
    early = np.concatenate([c.early_planting[y[2]] for y in yields])
    naive = float(t_ha[early].mean() - t_ha[~early].mean()) if early.any() and (~early).any() else None
    ate = float(np.concatenate(effects).mean())
    write_json(out_dir / "_truth.json", {
        "description": "Hidden generator truth of synthesize@crops; not part of either raw layout.",
        "params": params.model_dump(),
        "yield_model_t_ha": model.COEF,
        "planting_days_per_spring_c": model.PLANT_DAYS_PER_C,
        "special_years": {str(y): {"summer_dt_c": t, "rain_multiplier": m} for y, (t, m) in
                          model.SPECIAL_YEARS.items()},
        "early_planting": {"shift_days": EARLY_SHIFT_DAYS, "true_ate_t_ha": round(ate, 6),
                           "naive_difference_t_ha": None if naive is None else round(naive, 6),
                           "county_years": int(len(t_ha))},
        "khaki_weather_variables": list(KHAKI_WEATHER),
        "khaki_bushel_t_ha": BU_AC_T_HA,
        "counties": {
            a: {"loc_id": int(loc), "lat": round(float(la), 6), "lon": round(float(lo), 6),
                "soil_quality": round(float(q), 6), "wealth": round(float(w), 6), "early_planting": bool(e),
                "irrigated": bool(i)}
            for a, loc, la, lo, q, w, e, i in zip(c.adm_id, c.loc_id, c.lat, c.lon, c.soil_quality, c.wealth,
                                                  c.early_planting, c.irrigated, strict=True)},
    })
