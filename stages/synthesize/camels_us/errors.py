"""What separates a published hydrological record from the process that made it.

The synthetic truth runs on true weather with parameters that drift; the files publish what a
gridded product and a stream gauge would report. Arrays are (days, basins); every function draws
from `rngs`, one generator per basin, so a basin's values do not depend on which basins are
simulated with it.

- Precipitation: gauge undercatch, stronger for snow and in open, windy basins (Goodison et al.
  1998, WMO Solid Precipitation Measurement Intercomparison, WMO/TD-872; Rasmussen et al. 2012,
  doi:10.1175/BAMS-D-11-00052.1): 5-10 % of rain and 8-20 % of snow, less than the 20-40 % of
  unshielded gauges in wind so that a model with perfect knowledge of the generator keeps a
  median NSE of about 0.8-0.9 (`realism`); part of a day's total booked on the
  previous day (observation day vs. calendar day); multiplicative lognormal error of basin
  averaging; missed drizzle and small false events.
- Temperature: a basin bias plus persistent daily error.
- Snow water equivalent: a modelled product (another degree-day model with biased melt factor and
  thresholds, run on the published forcing, with multiplicative error on each snowfall), not the
  true snowpack.
- Discharge: rating-curve error with a slow (rating shifts) and a fast (AR(1)) part.
- Structure: the true process has slowly varying soil capacity and recession rates (AR(1) in log
  space) and occasional unrecorded soil-water gains and losses, which the fixed-parameter model
  lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.signal import lfilter

from stages.synthesize.camels_us import model

Rngs = Sequence[np.random.Generator]
# (AR(1) coefficient per day, standard deviation in log space) of the drifting parameters
S_MAX_DRIFT, K_QUICK_DRIFT, K_SLOW_DRIFT = (0.995, 0.12), (0.98, 0.08), (0.997, 0.15)
SHOCKS_PER_YEAR, SHOCK_MEDIAN_MM = 6.0, 8.0
RAIN_CATCH, SNOW_CATCH = (0.90, 0.95), (0.80, 0.92)  # published / true, per basin range
NOISE_SIGMA = (0.15, 0.3)  # per basin range of the daily lognormal error's log-space sd
EARLY_SHARE = 0.3  # up to this share of a day's precipitation is booked on the previous day
MISSED_BELOW_MM, MISSED_PROB, FALSE_PROB = 1.5, 0.4, 0.04
TEMP_BIAS_SD, TEMP_ERROR_SD, DTR_ERROR_SD = 0.25, 0.4, 0.4  # C
RATING_SLOW_SD, RATING_FAST_SD = 0.06, 0.07  # log space
SWE_SCALE_SD, SWE_EVENT_SD = 0.15, 0.4  # log space: per basin, per snowfall day


def draw_drift(rngs: Rngs, n_days: int) -> model.Drift:
    """Slowly varying parameter factors and occasional soil-water shocks of the true process."""
    factors = [np.exp(_ar1(_columns(rngs, lambda r: r.standard_normal(n_days)), phi, sd))
               for phi, sd in (S_MAX_DRIFT, K_QUICK_DRIFT, K_SLOW_DRIFT)]
    happens = _columns(rngs, lambda r: r.random(n_days)) < SHOCKS_PER_YEAR / 365.25
    size = _columns(rngs, lambda r: r.lognormal(np.log(SHOCK_MEDIAN_MM), 0.6, n_days))
    sign = np.where(_columns(rngs, lambda r: r.random(n_days)) < 0.5, -1.0, 1.0)
    return model.Drift(*factors, np.where(happens, sign * size, 0.0))


def published_precipitation(rngs: Rngs, prcp: np.ndarray, tmean: np.ndarray,
                            frac_forest: np.ndarray) -> np.ndarray:
    """Precipitation as a gridded gauge product reports it (mm/d, not rounded)."""
    n_days = prcp.shape[0]
    static = _columns(rngs, lambda r: r.random(4))  # (4, basins)
    shelter = 0.5 * frac_forest + 0.5 * static[0]  # forest shelters gauges from wind
    rain_catch = RAIN_CATCH[0] + (RAIN_CATCH[1] - RAIN_CATCH[0]) * static[1]
    snow_catch = SNOW_CATCH[0] + (SNOW_CATCH[1] - SNOW_CATCH[0]) * shelter
    sigma = NOISE_SIGMA[0] + (NOISE_SIGMA[1] - NOISE_SIGMA[0]) * static[2]
    early = EARLY_SHARE * static[3] * _columns(rngs, lambda r: r.random(n_days))
    moved = early * prcp  # booked on the previous day
    shifted = prcp - moved + np.vstack([moved[1:], np.zeros((1, prcp.shape[1]))])
    snow = model.snowfall_share(tmean)
    caught = shifted * (rain_catch * (1 - snow) + snow_catch * snow)
    z = _columns(rngs, lambda r: r.standard_normal(n_days))
    noisy = caught * np.exp(sigma * z - sigma**2 / 2)
    missed = (noisy < MISSED_BELOW_MM) & (_columns(rngs, lambda r: r.random(n_days)) < MISSED_PROB)
    false = (shifted == 0) & (_columns(rngs, lambda r: r.random(n_days)) < FALSE_PROB)
    drizzle = _columns(rngs, lambda r: r.lognormal(np.log(0.4), 0.7, n_days))
    return np.where(missed, 0.0, np.where(false, drizzle, noisy))


def published_temperature(rngs: Rngs, tmax: np.ndarray,
                          tmin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Daily maximum and minimum with a basin bias and persistent daily error (C)."""
    n_days = tmax.shape[0]
    bias = _columns(rngs, lambda r: r.normal(0.0, TEMP_BIAS_SD))
    level = _ar1(_columns(rngs, lambda r: r.standard_normal(n_days)), 0.6, TEMP_ERROR_SD)
    spread = DTR_ERROR_SD * _columns(rngs, lambda r: r.standard_normal(n_days))
    high = tmax + bias + level + spread / 2
    low = tmin + bias + level - spread / 2
    return high, np.minimum(low, high - 0.5)


def modelled_swe(rngs: Rngs, prcp: np.ndarray, tmean: np.ndarray,
                 ddf_mm_c_d: np.ndarray) -> np.ndarray:
    """Snow water equivalent of a product's own degree-day model on the published forcing (mm).

    All-or-nothing snow below a threshold temperature, melt above another, a melt factor biased
    from the true one, and each day's snowfall scaled by a multiplicative error (the product's
    own precipitation and density errors), so the pack stays smooth but is wrong.
    """
    n_days = prcp.shape[0]
    snow_below = _columns(rngs, lambda r: r.normal(1.0, 0.7))
    melt_above = _columns(rngs, lambda r: r.normal(0.5, 0.7))
    ddf = ddf_mm_c_d * _columns(rngs, lambda r: r.lognormal(np.log(0.85), 0.25))
    scale = _columns(rngs, lambda r: r.lognormal(0.0, SWE_SCALE_SD))
    error = np.exp(SWE_EVENT_SD * _columns(rngs, lambda r: r.standard_normal(n_days))
                   - SWE_EVENT_SD**2 / 2)
    snowfall = np.where(tmean < snow_below, prcp * scale * error, 0.0)
    potential = ddf * np.maximum(tmean - melt_above, 0.0)
    pack, swe = np.zeros(prcp.shape[1]), np.empty_like(prcp)
    for day in range(n_days):
        pack += snowfall[day]
        pack -= np.minimum(pack, potential[day])
        swe[day] = pack
    return swe


def rating_error(rngs: Rngs, n_days: int) -> np.ndarray:
    """Log-space discharge error: slow rating shifts plus fast AR(1) error, mean factor 1."""
    slow_sd, fast_sd = RATING_SLOW_SD, RATING_FAST_SD
    slow = _ar1(_columns(rngs, lambda r: r.standard_normal(n_days)), 0.997, slow_sd)
    fast = _ar1(_columns(rngs, lambda r: r.standard_normal(n_days)), 0.8, fast_sd)
    return slow + fast - (slow_sd**2 + fast_sd**2) / 2


def _columns(rngs: Rngs, draw: Callable[[np.random.Generator], np.ndarray]) -> np.ndarray:
    """One draw per basin, stacked along the last axis."""
    return np.stack([np.asarray(draw(rng), dtype=float) for rng in rngs], axis=-1)


def _ar1(z: np.ndarray, phi: float, sd: float) -> np.ndarray:
    """Stationary AR(1) along axis 0 with standard deviation `sd`, driven by standard normals."""
    first = sd * z[:1]  # day 0 drawn from the stationary distribution
    rest = lfilter([sd * np.sqrt(1 - phi**2)], [1, -phi], z[1:], axis=0, zi=phi * first)[0]
    return np.vstack([first, rest])
