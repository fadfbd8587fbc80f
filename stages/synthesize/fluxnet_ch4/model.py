"""A simple wetland model on a half-hourly (or hourly) grid: weather, soil, water table, fluxes.

Pure numpy; every function takes a site's parameters, the time grid and a seeded generator.
- Weather: seasonal + diurnal air temperature with AR(1) synoptic anomalies, persistent wet days
  (latent AR(1) thresholded) with gamma amounts falling as short storms, clouds that dim the
  clear-sky radiation of the site's solar geometry, humidity, pressure and wind.
- Soil: soil temperature at depth k is air temperature low-pass filtered with a depth-dependent
  time constant (damped, lagged diurnal and annual cycles), insulated below 0 degC by snow/water.
- Water: a daily bucket: the water table rises with rain and snowmelt (specific yield below the
  surface, open water above), falls with evapotranspiration, relaxes to a site level, spills.
- Methane (nmol m-2 s-1): `F = F10 * Q10 ** ((TS_1 - 10) / 10) * exp(k * min(WTD, 0))
  * (1 - h + h * S) * exp(a * cos(2 pi (hour - 13) / 24))`: a Q10 response to shallow soil
  temperature, an exponential decline as the water table drops below the surface (WTD > 0 = above
  the surface, as in FLUXNET-CH4), a substrate supply S and a plant-mediated diurnal cycle peaking
  early afternoon. S is the growing-season index clip(TS_1 / 15, 0, 1) of the daily mean soil
  temperature, low-pass filtered with a `SUBSTRATE_TAU_DAYS` time constant (labile carbon from the
  season's plant growth): it lags temperature, so at one temperature the late season emits more
  than the early season (seasonal hysteresis, stronger with the site's h). Days differ further by
  a multiplicative AR(1) anomaly (`daily_anomaly`: ebullition and transport the drivers miss).
- CO2 and energy: light-response GPP, Q10 respiration, NEE = RECO - GPP; LE/H split of the
  available energy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter
from scipy.special import ndtri

SIGMA_SB = 5.670374419e-8
TS_TAU_DAYS = (0.3, 2.0, 6.0, 15.0)  # soil temperature time constants for TS_1..TS_4
SUBSTRATE_TAU_DAYS = 45.0  # substrate pool: time constant of the low-passed growing-season index
GROWING_TS_C = 15.0  # daily soil temperature at which the growing-season index saturates


@dataclass(frozen=True)
class Grid:
    """A site's time grid: whole local-standard-time days, `steps` intervals per day."""

    first_day: np.datetime64
    n_days: int
    step_min: int

    @property
    def steps(self) -> int:
        """Intervals per day."""
        return 1440 // self.step_min

    @property
    def size(self) -> int:
        """Number of intervals."""
        return self.n_days * self.steps

    def days(self) -> np.ndarray:
        """The local dates (datetime64[D])."""
        return self.first_day + np.arange(self.n_days)

    def hour(self) -> np.ndarray:
        """Local standard hour at each interval's midpoint."""
        return np.tile((np.arange(self.steps) + 0.5) * self.step_min / 60, self.n_days)

    def time_days(self) -> np.ndarray:
        """Days since the first midnight at each interval's midpoint."""
        return np.repeat(np.arange(self.n_days), self.steps) + self.hour() / 24

    def doy(self) -> np.ndarray:
        """Fractional day of year at each interval's midpoint."""
        days = self.days()
        day_of_year = (days - days.astype("datetime64[Y]")).astype(np.int64) + 1
        return np.repeat(day_of_year, self.steps) + self.hour() / 24


def daily_ar1(rng: np.random.Generator, n_days: int, phi: float, sigma: float) -> np.ndarray:
    """A stationary AR(1) series with lag-1 correlation `phi` and standard deviation `sigma`."""
    noise = rng.standard_normal(n_days) * sigma * np.sqrt(1 - phi**2)
    noise[0] = noise[0] / np.sqrt(1 - phi**2)
    return lfilter([1.0], [1.0, -phi], noise)


def to_grid(grid: Grid, daily: np.ndarray) -> np.ndarray:
    """Linear interpolation of day-centred values to the interval midpoints."""
    return np.interp(grid.time_days(), np.arange(grid.n_days) + 0.5, daily)


def potential_radiation(grid: Grid, lat: float, lon: float, utc_offset_h: float) -> np.ndarray:
    """Clear-sky shortwave (W m-2): solar geometry at the midpoint, transmissivity 0.75."""
    doy = grid.doy()
    declination = np.radians(23.44) * np.sin(2 * np.pi * (284 + doy) / 365.0)
    solar_hour = grid.hour() + (lon - 15 * utc_offset_h) / 15
    hour_angle = np.radians(15 * (solar_hour - 12))
    phi = np.radians(lat)
    cos_zenith = np.sin(phi) * np.sin(declination) + np.cos(phi) * np.cos(declination) * np.cos(hour_angle)
    return 1361 * 0.75 * np.clip(cos_zenith, 0, None)


def weather(grid: Grid, climate: dict[str, float], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Air temperature, precipitation, clouds, humidity, pressure, wind and radiation."""
    n, hour, doy = grid.n_days, grid.hour(), grid.doy()
    season = -np.cos(2 * np.pi * (doy - climate["cold_doy"]) / 365.25)
    day_doy = np.arange(n) + float(grid.doy()[0])
    wet_season = np.cos(2 * np.pi * (day_doy - climate["wet_doy"]) / 365.25)
    p_wet = np.clip(climate["wet_frac"] * (1 + climate["wet_amp"] * wet_season), 0.02, 0.95)
    wet = daily_ar1(rng, n, 0.5, 1.0) > ndtri(1 - p_wet)
    amount = np.where(wet, rng.gamma(0.7, climate["wet_mm"] / 0.7, n), 0.0)
    cloud_d = np.clip(0.25 + 0.45 * wet + 0.2 * rng.standard_normal(n), 0.0, 1.0)
    cloud = to_grid(grid, cloud_d)
    diurnal = np.cos(2 * np.pi * (hour - 15) / 24)
    anomaly = to_grid(grid, daily_ar1(rng, n, 0.8, climate["ta_sigma"]))
    ta = (climate["ta_mean"] + climate["ta_amp"] * season + anomaly
          + climate["dtr"] / 2 * diurnal * (1 - 0.5 * cloud) + 0.3 * rng.standard_normal(grid.size))
    rh = np.clip(climate["rh_mean"] + 20 * (cloud - 0.4) - 15 * diurnal * (1 - 0.5 * cloud)
                 + to_grid(grid, daily_ar1(rng, n, 0.6, 5.0)) + 2 * rng.standard_normal(grid.size), 8, 100)
    es_hpa = 6.112 * np.exp(17.67 * ta / (ta + 243.5))
    ws_d = rng.gamma(4.0, climate["ws_mean"] / 4.0, n)
    ws = np.clip(to_grid(grid, ws_d) * (1 + 0.3 * np.cos(2 * np.pi * (hour - 14) / 24))
                 + 0.3 * rng.standard_normal(grid.size), 0.1, None)
    sw_pot = potential_radiation(grid, climate["lat"], climate["lon"], climate["utc_offset_h"])
    sw_in = np.clip(sw_pot * (1 - 0.7 * cloud) * (1 + 0.05 * rng.standard_normal(grid.size)), 0, None)
    return {
        "TA": ta, "RH": rh, "VPD": es_hpa * (1 - rh / 100), "SW_IN": sw_in, "WS": ws,
        "PA": 101.325 * np.exp(-climate["elev_m"] / 8434) + to_grid(grid, daily_ar1(rng, n, 0.7, 0.6))
        + 0.02 * rng.standard_normal(grid.size),
        "WD": np.mod(climate["wd_mean"] + to_grid(grid, daily_ar1(rng, n, 0.5, 60.0))
                     + 20 * rng.standard_normal(grid.size), 360),
        "USTAR": np.clip(0.07 * ws * (0.7 + 0.3 * (sw_pot > 0)) * (1 + 0.2 * rng.standard_normal(grid.size)),
                         0.01, None),
        "LW_IN": (0.7 + 0.25 * cloud) * SIGMA_SB * (ta + 273.15) ** 4,
        "P": _storms(grid, amount, rng), "cloud": cloud, "precip_day": amount,
    }


def _storms(grid: Grid, amount: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Spread each day's precipitation evenly over one storm of 1 to steps/4 intervals."""
    length = rng.integers(1, grid.steps // 4 + 1, grid.n_days)
    start = (rng.random(grid.n_days) * (grid.steps - length + 1)).astype(np.int64)
    slot = np.arange(grid.steps)
    inside = (slot >= start[:, None]) & (slot < (start + length)[:, None])
    return np.where(inside, (amount / length)[:, None], 0.0).ravel()


def soil_temperatures(grid: Grid, ta: np.ndarray, offset_c: float) -> list[np.ndarray]:
    """TS_1..TS_4: insulated air temperature, low-pass filtered with `TS_TAU_DAYS`."""
    forcing = np.where(ta > 0, ta, 0.3 * ta) + offset_c
    dt = grid.step_min / 1440
    layers = []
    for tau in TS_TAU_DAYS:
        alpha = dt / (tau + dt)
        start = forcing[: grid.steps * 10].mean()  # spin-up: start near the first days' mean
        layers.append(lfilter([alpha], [1, alpha - 1], forcing, zi=[(1 - alpha) * start])[0])
    return layers


def water_balance(grid: Grid, ta: np.ndarray, precip_day: np.ndarray,
                  water: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Daily snow water equivalent (mm) and water table depth (m, > 0 above the surface)."""
    ta_day = ta.reshape(grid.n_days, grid.steps).mean(axis=1)
    swe, level = np.zeros(grid.n_days), np.zeros(grid.n_days)
    snow, table = 0.0, water["wtd_ref"]
    for day in range(grid.n_days):
        cold = ta_day[day] < 0
        melt = min(snow, 3.0 * max(ta_day[day], 0.0))
        snow += (precip_day[day] if cold else 0.0) - melt
        inflow = (0.0 if cold else precip_day[day]) + melt
        et = max(0.0, water["et_coef"] * ta_day[day])
        storage = water["sy"] if table < 0 else 1.0
        table += (inflow - et) / 1000 / storage - water["relax"] * (table - water["wtd_ref"])
        table = min(max(table, -0.9), water["wtd_ref"] + 0.35)
        swe[day], level[day] = snow, table
    return swe, level


def substrate(grid: Grid, ts_1: np.ndarray) -> np.ndarray:
    """Substrate supply S in [0, 1] on the grid: the low-passed growing-season index (module doc)."""
    growing = np.clip(ts_1.reshape(grid.n_days, grid.steps).mean(axis=1) / GROWING_TS_C, 0.0, 1.0)
    alpha = 1.0 / (SUBSTRATE_TAU_DAYS + 1.0)
    pool = lfilter([alpha], [1, alpha - 1], growing, zi=[(1 - alpha) * growing[:30].mean()])[0]
    return to_grid(grid, pool)


def daily_anomaly(grid: Grid, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """Multiplicative day-to-day methane anomaly exp(AR(1)) on the grid, mean one."""
    return to_grid(grid, np.exp(daily_ar1(rng, grid.n_days, 0.6, sigma) - sigma**2 / 2))


def methane(ts_1: np.ndarray, wtd: np.ndarray, hour: np.ndarray, supply: np.ndarray,
            flux: dict[str, float]) -> np.ndarray:
    """Noise-free methane flux (nmol m-2 s-1) from soil temperature, water table and substrate."""
    temperature = flux["q10"] ** ((ts_1 - 10) / 10)
    water = np.exp(flux["k_wtd"] * np.minimum(wtd, 0))
    substrate_factor = 1 - flux["hysteresis"] + flux["hysteresis"] * supply
    diurnal = np.exp(flux["diurnal"] * np.cos(2 * np.pi * (hour - 13) / 24))
    return flux["f10"] * temperature * water * substrate_factor * diurnal


def energy_and_carbon(met: dict[str, np.ndarray], ts: list[np.ndarray], swe: np.ndarray,
                      carbon: dict[str, float], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Radiation balance, G, LE, H, GPP, RECO and NEE (noise-free apart from surface noise)."""
    ta, sw_in = met["TA"], met["SW_IN"]
    snowy = swe > 5
    albedo = np.where(snowy, 0.75, 0.15)
    surface = ta + 2 * sw_in / 800
    lw_out = 0.98 * SIGMA_SB * (surface + 273.15) ** 4 + 0.02 * met["LW_IN"]
    sw_out = albedo * sw_in
    netrad = sw_in - sw_out + met["LW_IN"] - lw_out
    g = 0.1 * netrad * np.where(snowy, 0.3, 1.0)
    le = np.clip(0.65 * (netrad - g), 0, None) * np.where(ta > 0, 1.0, 0.2)
    size = len(ta)
    growing = np.clip(ts[1] / 15, 0, 1)
    ppfd = 2.1 * sw_in
    gpp = carbon["gpp_max"] * ppfd / (ppfd + 600) * growing
    reco = carbon["r10"] * 2.0 ** ((ta - 10) / 10) * (0.4 + 0.6 * growing)
    return {
        "SW_OUT": sw_out, "LW_OUT": lw_out, "NETRAD": netrad, "G": g, "PPFD_IN": ppfd,
        "LE": le + 5 * rng.standard_normal(size), "H": netrad - g - le + 8 * rng.standard_normal(size),
        "GPP": gpp, "RECO": reco, "NEE": reco - gpp,
    }
