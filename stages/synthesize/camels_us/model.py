"""Seasonal weather generator and a snow + two-store rainfall-runoff model, vectorised over basins.

Arrays are shaped (days, basins); per-basin parameters are arrays of shape (basins,). Loops run
over days only where a state carries over (wet/dry Markov chain, snowpack, soil, reservoirs).
Radiation, day length and reference evapotranspiration follow FAO-56 (Allen, Pereira, Raes and
Smith 1998, FAO Irrigation and Drainage Paper 56: eqs. 21-25, 34, 50, 52). `simulate_runoff`
with a `Drift` is the synthetic truth; without one it is the fixed-parameter model an analyst
could fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter
from scipy.special import ndtr

OMEGA = 2 * np.pi / 365.25
SOLAR_CONSTANT = 0.0820  # MJ m-2 min-1
WET_PERSISTENCE = 0.35  # lag-1 autocorrelation of the wet/dry state
TEMP_PERSISTENCE = 0.7  # AR(1) coefficient of daily temperature anomalies
REGIONAL_SHARE = 0.8  # correlation of a basin's weather innovations with its region's
SNOW_BELOW_C, RAIN_ABOVE_C, MELT_ABOVE_C = -1.0, 3.0, 0.0
MAX_RATE_D = 0.95  # a reservoir cannot release more than it holds in a day


@dataclass(frozen=True)
class Climate:
    """Per-basin climate parameters, each of shape (basins,)."""

    lat_deg: np.ndarray
    t_mean_c: np.ndarray  # annual mean air temperature
    t_amp_c: np.ndarray  # half the annual range of daily means
    t_sigma_c: np.ndarray  # standard deviation of weather anomalies
    p_mean_mm_d: np.ndarray
    p_amp: np.ndarray  # relative amplitude of the precipitation cycle (< 1)
    p_peak_doy: np.ndarray
    wet_frac: np.ndarray  # annual mean probability of a wet day
    dtr_c: np.ndarray  # diurnal temperature range on dry days
    dew_depression_c: np.ndarray  # tmin minus dew point
    k_rs: np.ndarray  # Hargreaves radiation coefficient: 0.16 interior, 0.19 coastal


@dataclass(frozen=True)
class Catchment:
    """Per-basin parameters of the snow and soil/reservoir model, each of shape (basins,)."""

    s_max_mm: np.ndarray  # soil moisture capacity
    beta: np.ndarray  # runoff-generation nonlinearity (HBV-style)
    f_quick: np.ndarray  # share of generated runoff routed to the quick reservoir
    k_quick_d: np.ndarray  # quick reservoir outflow rate, 1/d
    k_slow_d: np.ndarray  # slow (baseflow) reservoir outflow rate, 1/d
    ddf_mm_c_d: np.ndarray  # degree-day melt factor
    threshold_mm: np.ndarray  # slow-store level below which the stream gets no baseflow
    leak_d: np.ndarray  # slow-store loss to deep groundwater / riparian ET, 1/d (losing streams)


@dataclass(frozen=True)
class Drift:
    """What the true runoff process has and the fixed-parameter model lacks, each (days, basins).

    Factors multiply the catchment's parameters of the same name on each day; the shock is water
    added to (negative: taken from) the soil store, such as unrecorded irrigation or abstraction.
    """

    s_max_factor: np.ndarray
    k_quick_factor: np.ndarray
    k_slow_factor: np.ndarray
    soil_shock_mm: np.ndarray


@dataclass(frozen=True)
class Innovations:
    """Random inputs of shape (days, basins), already correlated within regions."""

    temp: np.ndarray  # standard normal
    wet: np.ndarray  # uniform(0, 1)
    amount: np.ndarray  # positive, mean 1


def mix_innovations(local: np.ndarray, regional: np.ndarray, shape: np.ndarray) -> Innovations:
    """Combine per-basin draws with their region's draws.

    Args:
        local: (days, basins, 3): two standard normals, then a Gamma(`shape`) draw.
        regional: (days, basins, 3) standard normals of each basin's region.
        shape: (basins,) gamma shape of `local[..., 2]`.
    """
    share, rest = REGIONAL_SHARE, np.sqrt(1 - REGIONAL_SHARE**2)
    temp = share * regional[..., 0] + rest * local[..., 0]
    wet = ndtr(share * regional[..., 1] + rest * local[..., 1])
    storm = np.exp(0.4 * regional[..., 2] - 0.08)  # regional storm intensity, mean 1
    return Innovations(temp, wet, local[..., 2] / shape * storm)


def day_length_s(lat_deg: np.ndarray, doy: np.ndarray) -> np.ndarray:
    """Astronomical day length (FAO-56 eqs. 24, 25, 34), shape (days, basins)."""
    return 24 / np.pi * _sunset_angle(lat_deg, doy) * 3600


def extraterrestrial_radiation(lat_deg: np.ndarray, doy: np.ndarray) -> np.ndarray:
    """Daily extraterrestrial radiation Ra in MJ m-2 d-1 (FAO-56 eq. 21)."""
    phi = np.radians(lat_deg)[None, :]
    delta = _declination(doy)[:, None]
    omega_s = _sunset_angle(lat_deg, doy)
    d_r = (1 + 0.033 * np.cos(2 * np.pi * doy / 365))[:, None]
    return (24 * 60 / np.pi * SOLAR_CONSTANT * d_r * (omega_s * np.sin(phi) * np.sin(delta)
            + np.cos(phi) * np.cos(delta) * np.sin(omega_s)))


def saturation_vapour_pressure_pa(temp_c: np.ndarray) -> np.ndarray:
    """Tetens saturation vapour pressure over water (FAO-56 eq. 11), in Pa."""
    return 610.8 * np.exp(17.27 * temp_c / (temp_c + 237.3))


def simulate_weather(doy: np.ndarray, climate: Climate, noise: Innovations) -> dict:
    """True daily weather arrays keyed prcp, tmax, tmin, tmean and pet.

    Units as in the forcing files (mm/d, C); pet is Hargreaves reference evapotranspiration in
    mm/d. `derived_forcing` adds day length, radiation and vapour pressure.
    """
    phase = OMEGA * (doy[:, None] - climate.p_peak_doy)
    season = 1 + climate.p_amp * np.cos(phase)
    prob = np.clip(climate.wet_frac * (1 + 0.6 * climate.p_amp * np.cos(phase)), 0.03, 0.9)
    wet = _markov_chain(noise.wet, prob)
    prcp = np.where(wet, climate.p_mean_mm_d * season / prob * noise.amount, 0.0)
    gain = np.sqrt(1 - TEMP_PERSISTENCE**2)
    anomaly = lfilter([gain], [1, -TEMP_PERSISTENCE], noise.temp, axis=0) * climate.t_sigma_c
    cycle = climate.t_amp_c * np.sin(OMEGA * (doy[:, None] - 105))  # coldest mid-January
    tmean = climate.t_mean_c + cycle + anomaly - 1.0 * wet  # wet days are a little cooler
    dtr = climate.dtr_c * np.where(wet, 0.65, 1.0)
    ra = extraterrestrial_radiation(climate.lat_deg, doy)
    return {"prcp": prcp, "tmax": tmean + dtr / 2, "tmin": tmean - dtr / 2, "tmean": tmean,
            "pet": hargreaves_pet(ra, tmean, dtr)}


def derived_forcing(doy: np.ndarray, climate: Climate, tmax: np.ndarray,
                    tmin: np.ndarray) -> dict[str, np.ndarray]:
    """Day length, radiation and vapour pressure estimated from temperature, as Daymet does.

    Radiation from the diurnal range (Hargreaves, FAO-56 eq. 50, capped at clear sky), vapour
    pressure from the minimum temperature less a dew-point depression.
    """
    dayl = day_length_s(climate.lat_deg, doy)
    ra = extraterrestrial_radiation(climate.lat_deg, doy)
    rs = np.minimum(climate.k_rs * np.sqrt(np.maximum(tmax - tmin, 0.0)), 0.75) * ra
    return {"dayl": dayl, "srad": rs * 1e6 / dayl,
            "vp": saturation_vapour_pressure_pa(tmin - climate.dew_depression_c)}


def hargreaves_pet(ra: np.ndarray, tmean: np.ndarray, dtr: np.ndarray) -> np.ndarray:
    """Hargreaves reference evapotranspiration in mm/d (FAO-56 eq. 52), `ra` in MJ m-2 d-1."""
    return np.maximum(0.0023 * 0.408 * ra * (tmean + 17.8) * np.sqrt(np.maximum(dtr, 0.0)), 0.0)


def simulate_runoff(prcp: np.ndarray, tmean: np.ndarray, pet: np.ndarray, catchment: Catchment,
                    drift: Drift | None = None,
                    spinup_days: int = 730) -> tuple[np.ndarray, np.ndarray]:
    """Run the snow + soil + two-reservoir model; returns (swe_mm, q_mm_d).

    Without `drift` the parameters are constant: the simple model an analyst could calibrate.
    States are initialised by running the first `spinup_days` once and keeping the end state.
    """
    snow_share = snowfall_share(tmean)
    shape = prcp.shape
    if drift is None:
        ones = np.ones(shape)
        drift = Drift(ones, ones, ones, np.zeros(shape))
    inputs = (prcp * snow_share, prcp * (1 - snow_share),
              catchment.ddf_mm_c_d * np.maximum(tmean - MELT_ABOVE_C, 0.0), pet,
              catchment.s_max_mm * drift.s_max_factor,
              np.minimum(catchment.k_quick_d * drift.k_quick_factor, MAX_RATE_D),
              np.minimum(catchment.k_slow_d * drift.k_slow_factor, MAX_RATE_D - catchment.leak_d),
              drift.soil_shock_mm)
    n_basins = shape[1]
    state = (np.zeros(n_basins), 0.5 * catchment.s_max_mm, np.zeros(n_basins), np.zeros(n_basins))
    spin = min(spinup_days, shape[0])
    _, _, state = _run(tuple(x[:spin] for x in inputs), catchment, state)
    swe, q, _ = _run(inputs, catchment, state)
    return swe, q


def snowfall_share(tmean: np.ndarray) -> np.ndarray:
    """Share of precipitation falling as snow: 1 below -1 C, 0 above 3 C, linear between."""
    return np.clip((RAIN_ABOVE_C - tmean) / (RAIN_ABOVE_C - SNOW_BELOW_C), 0.0, 1.0)


def _declination(doy: np.ndarray) -> np.ndarray:
    return 0.409 * np.sin(2 * np.pi * doy / 365 - 1.39)  # FAO-56 eq. 24


def _sunset_angle(lat_deg: np.ndarray, doy: np.ndarray) -> np.ndarray:
    cos_ws = -np.tan(np.radians(lat_deg))[None, :] * np.tan(_declination(doy))[:, None]
    return np.arccos(np.clip(cos_ws, -1.0, 1.0))  # FAO-56 eq. 25


def _markov_chain(uniform: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Two-state wet/dry chain whose stationary wet probability is `prob` on each day."""
    p_wet_wet = prob + WET_PERSISTENCE * (1 - prob)
    p_dry_wet = prob * (1 - WET_PERSISTENCE)
    wet = np.empty(uniform.shape, dtype=bool)
    state = uniform[0] < prob[0]
    wet[0] = state
    for day in range(1, uniform.shape[0]):
        state = uniform[day] < np.where(state, p_wet_wet[day], p_dry_wet[day])
        wet[day] = state
    return wet


def _run(inputs: tuple[np.ndarray, ...], c: Catchment, state: tuple[np.ndarray, ...]):
    """Daily loop; state = (swe, soil, quick store, slow store) in mm."""
    snowfall, rain, melt_potential, pet, s_max, k_quick, k_slow, shock = inputs
    swe, soil, quick, slow = (s.copy() for s in state)
    swe_out, q_out = np.empty_like(rain), np.empty_like(rain)
    for day in range(rain.shape[0]):
        capacity = s_max[day]
        swe += snowfall[day]
        melt = np.minimum(swe, melt_potential[day])
        swe -= melt
        water = rain[day] + melt
        soil = np.maximum(soil + shock[day], 0.0)
        runoff = water * np.minimum(soil / capacity, 1.0) ** c.beta
        soil += water - runoff
        excess = np.maximum(soil - capacity, 0.0)
        soil -= excess
        runoff += excess
        soil -= np.minimum(soil, pet[day] * np.minimum(soil / (0.7 * capacity), 1.0))
        quick += c.f_quick * runoff
        slow += (1 - c.f_quick) * runoff
        q_quick = k_quick[day] * quick
        q_slow = k_slow[day] * np.maximum(slow - c.threshold_mm, 0.0)
        quick -= q_quick
        slow -= q_slow + c.leak_d * slow
        swe_out[day], q_out[day] = swe, q_quick + q_slow
    return swe_out, q_out, (swe, soil, quick, slow)
