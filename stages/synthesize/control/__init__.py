"""Synthetic control series with known structure: the benchmark's control set.

Writes under `out_dir` what `stages.sources.control` reads::

    series.csv     one row per series: series_id, family, region, a1, a2, a3, component, driver
    mixture.csv    series_id, date, y, x1, x2, x3, x4, x5 (daily), one file per family:
    noise.csv        Gaussian mixture, independent normals, autoregressive, linear model
    ar.csv
    linear.csv
    _truth.json    every series' generating parameters; readers ignore it

Families (each series has y and x1..x5 every day from first_year-01-01 to last_year-12-31):

- `mixture`: series drawn from `n_components` components. A component fixes a centre in attribute
  space (a1, a2, a3; within-component sd `ATTRIBUTE_SD`) and the statistics of y: level, sd, lag-1
  autocorrelation, seasonal amplitude and phase (per-series jitter around the first four). The
  levels are close together, so the mean alone does not tell components apart. `component` (1..k)
  is the hidden label; x1..x5 are independent standard normals.
- `noise`: y = level + sd * white noise; x1..x5 independent standard normals. Nothing beyond the
  series' mean can be predicted.
- `ar`: y = level + trend * years + amplitude * sin(season) + z, z an AR(1) or AR(2) process with
  known coefficients (stationary) and Gaussian innovations; x1..x5 independent standard normals.
- `linear`: y = b0 + sum_i b_i x_i + noise, x1 seasonal, x2 and x4 AR(1), x3 white noise (all unit
  variance) and the nuisance column x5 = 0.6 x1 + 0.8 noise (coefficient 0). b0 = 8 + 1.5 a1 - a2;
  x1..x4 have coefficient 0.4 except the series' hidden `driver` column, which has 2.0 and acts
  with a one-day delay (y on day t takes the driver of day t - 1; the others act the same day).
  A regression on the same day's covariates alone therefore misses most of the driver's effect.

Every family's levels come from one distribution (`LEVEL_MEAN`, `LEVEL_SD`), so a series' mean does
not tell its family. `region` (north/south/east/west) and the a1..a3 of non-mixture series are
independent of everything else. Series ids `S0001...` are a seeded shuffle of the series, so an
id tells nothing either. Series i of a family depends only on (seed, family, i) and the dates;
values are written with 4 decimals, so the same params give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.signal import lfilter

from stages.hashing import write_json
from stages.synthesize.common import SeededYears

FAMILIES = ("mixture", "noise", "ar", "linear")
FAMILY_SHARES = {"mixture": 0.3, "noise": 0.2, "ar": 0.25, "linear": 0.25}
REGIONS = ("north", "south", "east", "west")
VALUES = ("y", "x1", "x2", "x3", "x4", "x5")
LEVEL_MEAN, LEVEL_SD = 8.0, 2.0
BURN_IN_DAYS = 200
DAYS_PER_YEAR = 365.25
# mixture components: attribute centre (a1, a2, a3) and y's level, sd, lag-1 autocorrelation, seasonal
# amplitude and phase (day of year of the upward zero crossing). Levels are close, so a series' mean
# says little about its component; the seasonal cycles peak in different seasons.
COMPONENTS = (
    {"centre": (-2.0, 0.0, 1.0), "level": 7.8, "sd": 1.0, "lag1": 0.2, "amplitude": 2.0, "phase": 80.0},
    {"centre": (2.0, -1.0, 0.0), "level": 8.4, "sd": 2.0, "lag1": 0.7, "amplitude": 2.5, "phase": 200.0},
    {"centre": (0.0, 2.0, -1.0), "level": 8.1, "sd": 1.5, "lag1": 0.5, "amplitude": 1.5, "phase": 320.0},
    {"centre": (-1.0, -2.0, -2.0), "level": 8.7, "sd": 1.0, "lag1": 0.85, "amplitude": 3.0, "phase": 140.0},
)
ATTRIBUTE_SD = 0.6
LINEAR_BASE, LINEAR_DOMINANT = 0.4, 2.0  # coefficients of x1..x4; the driver's
LINEAR_DRIVERS = ("x1", "x2", "x3")
DRIVER_LAG_DAYS = 1  # the dominant driver acts on y one day later
NUISANCE_WEIGHT = 0.6  # x5 = 0.6 x1 + 0.8 noise: correlated with a driver, no effect on y


class Params(SeededYears):
    """Parameters of `synthesize@control`."""

    n_series: int = Field(ge=8, le=5000)
    n_components: int = Field(3, ge=2, le=len(COMPONENTS))


def write(out_dir: Path, params: Params) -> None:
    """Generate `series.csv`, one csv per family and `_truth.json` under `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    days = pd.date_range(f"{params.first_year}-01-01", f"{params.last_year}-12-31", freq="D")
    counts = family_counts(params.n_series)
    ids = series_ids(params.seed, counts)
    rows, truth = [], {}
    for code, family in enumerate(FAMILIES):
        frames = []
        for index in range(counts[family]):
            rng = np.random.default_rng([params.seed, code, index])
            series_id = ids[family][index]
            attributes, values, known = GENERATORS[family](rng, index, days, params)
            region = REGIONS[int(np.random.default_rng([params.seed, 10, code, index]).integers(len(REGIONS)))]
            rows.append({"series_id": series_id, "family": family, "region": region, **attributes})
            truth[series_id] = {"family": family, **known}
            frames.append(pd.DataFrame({"series_id": series_id, "date": days.strftime("%Y-%m-%d"), **values}))
        frame = pd.concat(frames, ignore_index=True).sort_values(["series_id", "date"], kind="stable")
        _write_csv(out_dir / f"{family}.csv", frame)
    series = pd.DataFrame(rows).sort_values("series_id", ignore_index=True)
    series["component"] = series["component"].astype("Int64")
    _write_csv(out_dir / "series.csv", series[["series_id", "family", "region", "a1", "a2", "a3",
                                               "component", "driver"]])
    write_json(out_dir / "_truth.json", {
        "description": "Hidden generator truth of synthesize@control; not part of the raw layout.",
        "params": params.model_dump(),
        "components": [dict(c, centre=list(c["centre"])) for c in COMPONENTS[:params.n_components]],
        "linear": {"intercept": "8 + 1.5 a1 - a2", "base": LINEAR_BASE, "dominant": LINEAR_DOMINANT,
                   "nuisance": f"x5 = {NUISANCE_WEIGHT} x1 + 0.8 noise"},
        "series": dict(sorted(truth.items())),
    })


def family_counts(n_series: int) -> dict[str, int]:
    """Series per family from `FAMILY_SHARES` (largest remainder; at least 2 each)."""
    exact = {f: n_series * share for f, share in FAMILY_SHARES.items()}
    counts = {f: max(2, int(v)) for f, v in exact.items()}
    by_remainder = sorted(FAMILIES, key=lambda f: (-(exact[f] - int(exact[f])), FAMILIES.index(f)))
    for family in by_remainder[:max(0, n_series - sum(counts.values()))]:
        counts[family] += 1
    return counts


def series_ids(seed: int, counts: dict[str, int]) -> dict[str, list[str]]:
    """`S0001`... handed out in a seeded random order, so an id carries no family."""
    total = sum(counts.values())
    order = np.random.default_rng([seed, 11]).permutation(total)
    names = [f"S{number + 1:04d}" for number in order]
    ids, start = {}, 0
    for family in FAMILIES:
        ids[family] = names[start:start + counts[family]]
        start += counts[family]
    return ids


def ar_process(rng: np.random.Generator, coefficients: tuple[float, ...], sd: float, n: int) -> np.ndarray:
    """The last `n` values of a zero-mean AR(p) process with innovation sd `sd`, after a burn-in."""
    shocks = rng.normal(0.0, sd, n + BURN_IN_DAYS)
    return lfilter([1.0], [1.0, *(-c for c in coefficients)], shocks)[BURN_IN_DAYS:]


def season(days: pd.DatetimeIndex, phase_days: float = 80.0) -> np.ndarray:
    """sin(2 pi (day of year - phase) / 365.25): +1 about three months after the phase day."""
    return np.sin(2 * np.pi * (days.dayofyear.to_numpy() - phase_days) / DAYS_PER_YEAR)


def _noise_drivers(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {f"x{i}": rng.standard_normal(n) for i in range(1, 6)}


def _mixture(rng: np.random.Generator, index: int, days: pd.DatetimeIndex, params: Params):
    component = index % params.n_components
    c = COMPONENTS[component]
    a = np.asarray(c["centre"]) + rng.normal(0.0, ATTRIBUTE_SD, 3)
    level = c["level"] + rng.normal(0.0, 0.6)
    sd = c["sd"] * float(np.exp(rng.normal(0.0, 0.1)))
    lag1 = float(np.clip(c["lag1"] + rng.normal(0.0, 0.05), 0.0, 0.95))
    amplitude = c["amplitude"] + rng.normal(0.0, 0.3)
    z = ar_process(rng, (lag1,), np.sqrt(1 - lag1 ** 2), len(days))
    y = level + amplitude * season(days, c["phase"]) + sd * z
    attributes = {"a1": a[0], "a2": a[1], "a3": a[2], "component": component + 1, "driver": None}
    known = {"component": component + 1, "level": level, "sd": sd, "lag1": lag1, "amplitude": amplitude}
    return attributes, {"y": y, **_noise_drivers(rng, len(days))}, known


def _noise(rng: np.random.Generator, index: int, days: pd.DatetimeIndex, params: Params):
    a = rng.standard_normal(3)
    level, sd = rng.normal(LEVEL_MEAN, LEVEL_SD), rng.uniform(0.8, 2.0)
    y = level + sd * rng.standard_normal(len(days))
    attributes = {"a1": a[0], "a2": a[1], "a3": a[2], "component": None, "driver": None}
    return attributes, {"y": y, **_noise_drivers(rng, len(days))}, {"level": level, "sd": sd}


def _ar(rng: np.random.Generator, index: int, days: pd.DatetimeIndex, params: Params):
    a = rng.standard_normal(3)
    if index % 2 == 0:
        coefficients = (rng.uniform(0.5, 0.9),)
    else:  # stationary, damped oscillation: phi1 + phi2 < 0.9
        phi2 = -rng.uniform(0.3, 0.6)
        coefficients = (min(rng.uniform(0.8, 1.4), 0.9 - phi2), phi2)
    sd = rng.uniform(0.5, 1.5)
    level, trend, amplitude = rng.normal(LEVEL_MEAN, LEVEL_SD), rng.normal(0.0, 0.5), rng.uniform(0.0, 3.0)
    years = np.arange(len(days)) / DAYS_PER_YEAR
    y = level + trend * years + amplitude * season(days) + ar_process(rng, coefficients, sd, len(days))
    attributes = {"a1": a[0], "a2": a[1], "a3": a[2], "component": None, "driver": None}
    known = {"coefficients": list(coefficients), "innovation_sd": sd, "level": level,
             "trend_per_year": trend, "amplitude": amplitude}
    return attributes, {"y": y, **_noise_drivers(rng, len(days))}, known


def _linear(rng: np.random.Generator, index: int, days: pd.DatetimeIndex, params: Params):
    a = rng.standard_normal(3)
    n = len(days) + DRIVER_LAG_DAYS  # the drivers start the lag earlier: y's first day has its cause
    driver = LINEAR_DRIVERS[index % len(LINEAR_DRIVERS)]
    earlier = pd.date_range(days[0] - pd.Timedelta(days=DRIVER_LAG_DAYS), periods=n, freq="D")
    x1 = np.sqrt(2) * 0.8 * season(earlier, rng.uniform(0.0, 365.0)) + 0.6 * rng.standard_normal(n)
    x2 = ar_process(rng, (0.8,), 0.6, n)
    x3 = rng.standard_normal(n)
    x4 = ar_process(rng, (0.95,), np.sqrt(1 - 0.95 ** 2), n)
    x5 = NUISANCE_WEIGHT * x1 + 0.8 * rng.standard_normal(n)
    coefficients = {f"x{i}": LINEAR_DOMINANT if f"x{i}" == driver else LINEAR_BASE for i in range(1, 5)}
    coefficients["x5"] = 0.0
    intercept = 8.0 + 1.5 * a[0] - a[1]
    noise_sd = rng.uniform(0.5, 1.0)
    drivers = {"x1": x1, "x2": x2, "x3": x3, "x4": x4, "x5": x5}
    acting = {name: values[:-DRIVER_LAG_DAYS] if name == driver else values[DRIVER_LAG_DAYS:]
              for name, values in drivers.items()}
    y = (intercept + sum(coefficients[name] * acting[name] for name in drivers)
         + noise_sd * rng.standard_normal(len(days)))
    attributes = {"a1": a[0], "a2": a[1], "a3": a[2], "component": None, "driver": driver}
    known = {"intercept": intercept, "coefficients": coefficients, "noise_sd": noise_sd, "driver": driver,
             "driver_lag_days": DRIVER_LAG_DAYS}
    return attributes, {"y": y, **{name: values[DRIVER_LAG_DAYS:] for name, values in drivers.items()}}, known


GENERATORS = {"mixture": _mixture, "noise": _noise, "ar": _ar, "linear": _linear}


def _write_csv(path: Path, frame: pd.DataFrame) -> None:
    """Plain csv: comma, LF, floats with 4 decimals (-0.0000 written as 0.0000), empty cell for null."""
    frame = frame.copy()
    for column in frame.columns:
        if pd.api.types.is_float_dtype(frame[column]):
            frame[column] = np.round(frame[column].to_numpy(), 4) + 0.0
    path.write_bytes(frame.to_csv(index=False, float_format="%.4f", lineterminator="\n").encode("ascii"))
