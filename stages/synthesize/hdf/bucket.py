"""A gridded daily snow + bucket water-balance model over a continental-US box (synthetic forcing).

Forcing: air temperature falls with latitude and with the ground elevation of the imagery's relief
(`landscape.regional_elevation`, so the grid and the mosaic describe one landscape) at a lapse
rate that steepens from 5 degC/km in humid to 8 degC/km in arid regions (`landscape.aridity`;
surface lapse rates vary with humidity and are rarely the free-air 6.5, Minder et al. 2010, JGR
115, D14122), and swings more with continentality, plus a spatially smooth AR(1) weather anomaly;
precipitation follows a humid-east / dry-interior / wet-Pacific-Northwest climatology with
winter-peaked rain near the Pacific and summer-peaked rain on the Plains, falling on spatially
coherent wet days in gamma-distributed amounts. Hamon (1961) potential
evapotranspiration from temperature and day length. Each land cell then runs a degree-day snow
pack and a soil bucket of capacity `whc`:

    S' = S + rain + melt;  aet = min(pet * S / whc, S');  L = S' - aet;
    drain = k L min(L / whc, 1)^2;  runoff = drain + max(0, L - drain - whc);  S_new = L - runoff

so that precip - aet - runoff = d(soil_water + swe) holds exactly every day.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from stages.synthesize.landscape import aridity, regional_elevation

LAT_RANGE = (25.0, 50.0)
LON_RANGE = (-125.0, -67.0)
COARSE = (5, 8)  # nodes of the smooth random fields (lat x lon)
DEGREE_DAY_MM_C = 3.0
DRAINAGE_PER_DAY = 0.02
ANOMALY_AR1 = 0.7
ANOMALY_SD_C = 3.0
WEST_COAST = ((25.0, -112.0), (32.5, -117.1), (35.0, -120.6), (40.0, -124.2), (50.0, -124.7))
EAST_COAST = ((25.0, -80.2), (30.0, -81.4), (35.0, -75.5), (41.0, -72.0), (45.0, -67.0), (50.0, -67.0))
VARIABLES = ("precip", "tair", "pet", "aet", "runoff", "soil_water", "swe")


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Domain:
    """Cell centres, the land mask and the static fields of the grid."""

    lat: np.ndarray
    lon: np.ndarray
    land: np.ndarray
    whc_mm: np.ndarray
    t_mean_c: np.ndarray
    t_amplitude_c: np.ndarray
    p_mean_mm_d: np.ndarray
    p_seasonality: np.ndarray


def make_domain(seed: int, n_lat: int, n_lon: int) -> Domain:
    """Regular cell centres over the box, coasts as ocean, climate and soil fields with gradients."""
    lat = LAT_RANGE[0] + (np.arange(n_lat) + 0.5) * (LAT_RANGE[1] - LAT_RANGE[0]) / n_lat
    lon = LON_RANGE[0] + (np.arange(n_lon) + 0.5) * (LON_RANGE[1] - LON_RANGE[0]) / n_lon
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    west = np.interp(la, *zip(*WEST_COAST, strict=True))
    east = np.interp(la, *zip(*EAST_COAST, strict=True))
    gulf = (la < 29.8) & (lo > -97.4) & (lo < -82.5)
    land = (lo > west) & (lo < east) & ~gulf
    inland = np.clip(np.minimum(lo - west, east - lo) / 15.0, 0.0, 1.0)
    pacific = np.exp(-(((lo - west) / 4.0) ** 2))
    elevation_km = regional_elevation(lo, la) / 1000.0
    humid_east = 1 / (1 + np.exp(-(lo + 97.0) / 4.0))
    soil = smooth_field(np.random.default_rng([seed, 11]), (n_lat, n_lon), 1)[0]
    return Domain(
        lat=lat, lon=lon, land=land,
        whc_mm=np.clip(90 + 150 * humid_east + 25 * soil, 40, 320),
        t_mean_c=24.0 - 0.8 * (la - 25.0) + 2.0 * pacific - lapse_rate_c_per_km(lo, la) * elevation_km,
        t_amplitude_c=5.0 + 0.3 * (la - 25.0) + 5.0 * inland - 2.0 * pacific,
        p_mean_mm_d=0.9 + 2.4 * humid_east + 3.2 * pacific / (1 + np.exp(-(la - 39.0) / 2.5))
        + 0.8 * np.exp(-(((la - 30.0) / 3.0) ** 2)) * humid_east,
        p_seasonality=0.8 * pacific - 0.5 * np.exp(-(((lo + 100.0) / 7.0) ** 2)),
    )


def lapse_rate_c_per_km(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Surface air-temperature lapse rate [degC/km]: 5 where humid, up to 8 where arid."""
    return 5.0 + 3.0 * aridity(lon, lat)


def smooth_field(rng: np.random.Generator, shape: tuple[int, int], n: int) -> np.ndarray:
    """`n` standard-normal fields on `shape`, bilinear interpolations of coarse iid noise."""
    return interpolate(rng.standard_normal((n, *COARSE)), shape)


def interpolate(coarse: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Bilinearly interpolate (n, *COARSE) nodes to (n, *shape), rescaled to unit variance."""
    ay, ax = (_weights(size, nodes) for size, nodes in zip(shape, COARSE, strict=True))
    scale = np.sqrt(np.outer((ay**2).sum(1), (ax**2).sum(1)))
    return np.einsum("ik,nkl,jl->nij", ay, coarse, ax) / scale


def simulate(domain: Domain, seed: int, doy: np.ndarray, block: int = 365) -> Iterator[dict[str, np.ndarray]]:
    """Yield blocks of daily fields (days, lat, lon), one per `block` days, carrying the state."""
    rng = np.random.default_rng([seed, 12])
    shape = domain.land.shape
    threshold_sd = _wet_threshold(domain.p_mean_mm_d)
    soil, swe = 0.5 * domain.whc_mm, np.zeros(shape)
    anomaly = np.zeros((1, *COARSE))
    for start in range(0, len(doy), block):
        days = doy[start:start + block]
        innovations = rng.standard_normal((len(days), *COARSE))
        coherence = smooth_field(rng, shape, len(days))
        amounts = rng.gamma(0.75, 1 / 0.75, (len(days), *shape))
        out = {name: np.empty((len(days), *shape)) for name in VARIABLES}
        for t, day in enumerate(days):
            anomaly = ANOMALY_AR1 * anomaly + np.sqrt(1 - ANOMALY_AR1**2) * innovations[t]
            season = np.cos(2 * np.pi * (day - 15) / 365.25)
            tair = domain.t_mean_c - domain.t_amplitude_c * season
            tair = tair + ANOMALY_SD_C * interpolate(anomaly, shape)[0]
            p_day = domain.p_mean_mm_d * (1 + domain.p_seasonality * season)
            wet = coherence[t] < threshold_sd
            precip = np.where(wet, p_day / _wet_fraction(domain.p_mean_mm_d) * amounts[t], 0.0)
            snow = np.where(tair < 0, precip, 0.0)
            melt = np.minimum(swe + snow, DEGREE_DAY_MM_C * np.maximum(tair, 0.0))
            swe = swe + snow - melt
            pet = hamon_pet(tair, domain.lat[:, None], day)
            wetted = soil + precip - snow + melt
            aet = np.minimum(pet * soil / domain.whc_mm, wetted)
            left = wetted - aet
            drain = DRAINAGE_PER_DAY * left * np.minimum(left / domain.whc_mm, 1.0) ** 2
            runoff = drain + np.maximum(0.0, left - drain - domain.whc_mm)
            soil = wetted - aet - runoff
            for name, values in zip(VARIABLES, (precip, tair, pet, aet, runoff, soil, swe), strict=True):
                out[name][t] = values
        yield out


def hamon_pet(tair_c: np.ndarray, lat_deg: np.ndarray, doy: int) -> np.ndarray:
    """Hamon (1961) potential evapotranspiration [mm/d] (Lu et al. 2005 form, coefficient 1.2)."""
    declination = 0.409 * np.sin(2 * np.pi * doy / 365 - 1.39)
    cos_hour = np.clip(-np.tan(np.radians(lat_deg)) * np.tan(declination), -1.0, 1.0)
    daylength_h = 24 / np.pi * np.arccos(cos_hour)
    e_sat_hpa = 6.108 * np.exp(17.26939 * tair_c / (tair_c + 237.3))
    rho_sat = 216.7 * e_sat_hpa / (tair_c + 273.3)
    return 1.2 * 0.1651 * (daylength_h / 12) * rho_sat


def _wet_fraction(p_mean: np.ndarray) -> np.ndarray:
    return np.clip(0.12 + 0.08 * p_mean, 0.12, 0.55)


def _wet_threshold(p_mean: np.ndarray) -> np.ndarray:
    """Standard-normal quantile of the wet-day fraction (a day is wet where the field is below)."""
    return norm.ppf(_wet_fraction(p_mean))


def _weights(size: int, nodes: int) -> np.ndarray:
    """(size, nodes) linear-interpolation weights from evenly spread nodes to cell centres."""
    position = (np.arange(size) + 0.5) / size * (nodes - 1)
    low = np.minimum(np.floor(position).astype(int), nodes - 2)
    weights = np.zeros((size, nodes))
    weights[np.arange(size), low] = 1 - (position - low)
    weights[np.arange(size), low + 1] = position - low
    return weights
