"""Daily corn-belt weather and a weather-, soil- and management-driven maize yield model.

Weather (one calendar year at a time, all counties at once): temperature = latitude climatology +
belt-wide and east-west synoptic anomalies (AR(1)) + local noise + a summer anomaly of the year
(1988 and 2012 are hot and dry); rain occurrence is spatially correlated, amounts gamma-distributed
around a west-to-east climatology; radiation from FAO-56 extraterrestrial radiation and cloudiness;
ET0 by Hargreaves; VPD from saturation vapour pressure at tmax/tmin and a dew point near tmin.

Yield (t/ha) over the season window [planting, planting + season):
    10.4 + 0.11 (year - 2000) + 0.10 (awc - 17) + 0.55 wealth + county effect + 0.45 early
    + 0.002 (min(GDD, 1450) - 1350) - 0.025 EDD - 0.010 (1 - 0.6 irrigated) water stress
    + 0.40 spring warmth - (0.15 + 0.008 (year - 2000)) max(silking VPD - 9 hPa, 0) + noise
GDD: degree days of tavg (capped at 30 degC) above 10 degC; EDD: degree days of tmax above 30 degC;
water stress: crop demand (kc * ET0) minus rain, beyond what the soil stores: 0.6 * awc * 10 mm,
scaled by the spring recharge (April-May rain over its climatology, clipped to [0.5, 1.2]).
Spring warmth (mean tavg anomaly of April-May, degC) also moves planting 3 days earlier per degC:
warm springs plant early *and* yield more (better establishment), so a naive regression of yield on
planting date within counties overstates what planting earlier does. Silking VPD (mean VPD from 50
to 90 days after planting) costs yield with a sensitivity that rises over the years (drought
sensitivity grew as yields rose in the Midwest).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter
from scipy.special import expit, ndtr

from stages.synthesize.crops.counties import EARLY_SHIFT_DAYS, Counties

COEF = {"base": 10.4, "trend_per_year": 0.11, "awc_per_cm_m": 0.10, "wealth_per_sd": 0.55,
        "early_direct": 0.45, "gdd": 0.002, "gdd_cap": 1450.0, "gdd_ref": 1350.0, "edd": -0.025,
        "water_stress_per_mm": -0.010, "irrigation_relief": 0.6, "noise_sd": 0.4,
        "spring_warmth_per_c": 0.4, "vpd_per_hpa": -0.15, "vpd_per_hpa_per_year": -0.008,
        "vpd_threshold_hpa": 9.0}
PLANT_DAYS_PER_C = -3.0  # planting moves earlier in warm springs
SPRING_DOY = (91, 152)  # April and May
SILKING_DAYS = (50, 90)  # after planting: the VPD-sensitive window
RECHARGE_CLIP = (0.5, 1.2)
SPECIAL_YEARS = {1988: (2.0, 0.55), 2012: (2.3, 0.6)}  # summer temperature anomaly, rain multiplier
WET_PROBABILITY = 0.32


@dataclass(frozen=True)
class Season:
    """Weather indices of one season window per county."""

    gdd: np.ndarray
    edd: np.ndarray
    water_stress_mm: np.ndarray
    vpd_silking_hpa: np.ndarray
    spring_warmth_c: np.ndarray


def simulate_weather(seed: int, year: int, c: Counties, swe0: np.ndarray) -> dict[str, np.ndarray]:
    """Daily weather (days x counties) of one year; `swe` continues from `swe0` (last year's end)."""
    rng = np.random.default_rng([seed, 2, year])
    n_days = 366 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 365
    doy = np.arange(1, n_days + 1, dtype=float)[:, None]
    lat, lon = c.lat[None, :], c.lon[None, :]
    summer = np.exp(-(((doy - 195) / 45) ** 2))
    d_t, rain_mult = SPECIAL_YEARS.get(year, (rng.normal(0, 0.8), np.exp(rng.normal(0, 0.22))))
    tilt = rng.normal(0, 0.5, 2)
    anomaly_t = d_t + tilt[0] * (lat - 42) / 4
    multiplier = rain_mult * np.exp(tilt[1] * (lon + 92) / 8)
    shared = lfilter([1], [1, -0.8], rng.normal(0, 1.3, n_days))[:, None]
    east_west = lfilter([1], [1, -0.8], rng.normal(0, 0.9, n_days))[:, None] * (lon + 92) / 8
    local = lfilter([1], [1, -0.6], rng.normal(0, 0.8, (n_days, len(c))), axis=0)
    t_mean = 11.0 - 0.85 * (lat - 40) + (13.5 + 0.35 * (lat - 40)) * np.sin(2 * np.pi * (doy - 108) / 365.25)
    tavg = t_mean + shared + east_west + local + anomaly_t * summer
    z = 0.6 * rng.standard_normal((n_days, 1)) + 0.8 * rng.standard_normal((n_days, len(c)))
    wet = ndtr(z) < WET_PROBABILITY * multiplier ** (0.5 * summer)
    annual = np.clip(950 + 35 * (lon + 90), 400, 1300)
    normal = annual / 365 * (1 + 0.35 * np.sin(2 * np.pi * (doy - 80) / 365))
    mean = normal * multiplier**summer
    prec = np.where(wet, rng.standard_gamma(0.8, wet.shape) * mean / (WET_PROBABILITY * 0.8), 0.0)
    dtr = np.clip(11.5 - 4 * wet + rng.normal(0, 1.5, wet.shape), 3, 20)
    tmax, tmin = tavg + dtr / 2, tavg - dtr / 2
    ra = _extraterrestrial_mj(doy, lat)
    clear = np.clip(0.75 - 0.45 * wet + rng.normal(0, 0.1, wet.shape), 0.15, 0.95)
    rad = ra * (0.25 + 0.5 * clear) * 1e6
    et0 = np.clip(0.0023 * 0.408 * ra * (tavg + 17.8) * np.sqrt(dtr), 0, None)
    ea = _es_hpa(tmin - 1.0 + wet)
    vpd = np.clip((_es_hpa(tmax) + _es_hpa(tmin)) / 2 - ea, 0, None)
    swe = np.empty_like(prec)
    level = swe0
    for day in range(n_days):  # snow pack: accumulate below 0 degC, melt 3 mm/degC/day
        snow, melt = np.where(tavg[day] < 0, prec[day], 0), np.clip(3 * tavg[day], 0, None)
        level = np.maximum(0.0, level + snow - melt)
        swe[day] = level
    spring = slice(SPRING_DOY[0] - 1, SPRING_DOY[1])
    return {"tmin": tmin, "tmax": tmax, "tavg": tavg, "prec": prec, "rad": rad, "et0": et0,
            "vpd": vpd, "ea_hpa": ea, "swe": swe,
            "spring_warmth": (tavg[spring] - t_mean[spring]).mean(0),
            "spring_recharge": prec[spring].sum(0) / normal[spring].sum(0)}


def season(weather: dict[str, np.ndarray], plant: np.ndarray, days: np.ndarray, awc: np.ndarray) -> Season:
    """GDD, EDD, water stress and silking VPD over each county's window [plant, plant + days)."""
    t = np.arange(1, weather["tavg"].shape[0] + 1, dtype=float)[:, None] - plant[None, :]
    inside = (t >= 0) & (t < days[None, :])
    gdd = (np.clip(np.minimum(weather["tavg"], 30) - 10, 0, None) * inside).sum(0)
    edd = (np.clip(weather["tmax"] - 30, 0, None) * inside).sum(0)
    kc = 0.3 + 0.85 * expit((t - 35) / 8) - 0.55 * expit((t - days[None, :] + 20) / 8)
    deficit = ((kc * weather["et0"] - weather["prec"]) * inside).sum(0)
    store = 0.6 * awc * 10 * np.clip(weather["spring_recharge"], *RECHARGE_CLIP)
    silking = (t >= SILKING_DAYS[0]) & (t < SILKING_DAYS[1])
    vpd = (weather["vpd"] * silking).sum(0) / silking.sum(0)
    return Season(gdd, edd, np.clip(deficit - store, 0, None), vpd, weather["spring_warmth"])


def yield_t_ha(year: int, c: Counties, s: Season, early: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Maize yield of one year per county, with `early` the planting practice (bool array)."""
    k = COEF
    water = k["water_stress_per_mm"] * (1 - k["irrigation_relief"] * c.irrigated) * s.water_stress_mm
    value = (k["base"] + k["trend_per_year"] * (year - 2000) + k["awc_per_cm_m"] * (c.awc_cm_m - 17)
             + k["wealth_per_sd"] * c.wealth + c.county_effect + k["early_direct"] * early
             + k["gdd"] * (np.minimum(s.gdd, k["gdd_cap"]) - k["gdd_ref"]) + k["edd"] * s.edd + water
             + k["spring_warmth_per_c"] * s.spring_warmth_c + vpd_sensitivity(year)
             * np.clip(s.vpd_silking_hpa - k["vpd_threshold_hpa"], 0, None) + k["noise_sd"] * noise)
    return np.clip(value, 0.8, None)


def vpd_sensitivity(year: int) -> float:
    """Yield change per hPa of silking VPD above the threshold (t/ha/hPa), growing over the years."""
    return COEF["vpd_per_hpa"] + COEF["vpd_per_hpa_per_year"] * (year - 2000)


def planting(c: Counties, year_shift: float, local: np.ndarray, early: np.ndarray,
             spring_warmth: np.ndarray) -> np.ndarray:
    """Planting day of year under practice `early` (the county mean moves by the early shift).

    Warm springs plant earlier (`PLANT_DAYS_PER_C` days per degC of April-May warmth).
    """
    return (c.plant_doy + EARLY_SHIFT_DAYS * (c.early_planting.astype(float) - early) + year_shift + local
            + PLANT_DAYS_PER_C * spring_warmth)


def canopy(doy: np.ndarray, plant: np.ndarray, days: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Green canopy fraction (0..1) on the given days (rows) per county (columns)."""
    t = doy[:, None] - plant[None, :]
    amplitude = np.clip(0.45 + 0.045 * y, 0.3, 0.97)[None, :]
    return amplitude * expit((t - 40) / 8) * (1 - expit((t - days[None, :] - 5) / 9))


def _extraterrestrial_mj(doy: np.ndarray, lat_deg: np.ndarray) -> np.ndarray:
    """FAO-56 eq. 21 extraterrestrial radiation, MJ m-2 day-1."""
    phi = np.radians(lat_deg)
    dr = 1 + 0.033 * np.cos(2 * np.pi * doy / 365)
    delta = 0.409 * np.sin(2 * np.pi * doy / 365 - 1.39)
    ws = np.arccos(np.clip(-np.tan(phi) * np.tan(delta), -1, 1))
    return 24 * 60 / np.pi * 0.0820 * dr * (ws * np.sin(phi) * np.sin(delta)
                                            + np.cos(phi) * np.cos(delta) * np.sin(ws))


def _es_hpa(t: np.ndarray) -> np.ndarray:
    return 6.108 * np.exp(17.27 * t / (t + 237.3))
