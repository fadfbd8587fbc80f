"""Synthetic corn-belt counties: ids, names, location, soil, wealth and management.

The 12 states and their county counts follow the Khaki et al. (2020) corn lookup (1,105 counties);
county FIPS codes are the odd numbers 001, 003, ... as in the real numbering. Soil quality and
county wealth are latent and correlated; early planting and irrigation are more common on good
soil and in wealthy counties (irrigation also in the dry west), and wealth raises yield through
unobserved input intensity: the confounding that makes naive management comparisons too large.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

# FIPS, Khaki state name, centre lat/lon, half-span lat/lon (deg), number of counties
STATES = (
    ("17", "illinois", 39.8, -89.3, 2.4, 1.7, 102), ("18", "indiana", 39.8, -86.3, 1.9, 1.5, 92),
    ("19", "iowa", 42.0, -93.4, 1.5, 3.0, 99), ("20", "kansas", 38.5, -98.3, 1.4, 3.5, 105),
    ("21", "kentucky", 37.6, -85.6, 0.9, 3.3, 120), ("26", "michigan", 43.6, -84.5, 1.8, 1.8, 83),
    ("27", "minnesota", 45.9, -94.4, 2.4, 2.4, 87), ("29", "missouri", 38.3, -92.5, 1.9, 2.8, 115),
    ("31", "nebraska", 41.5, -99.6, 1.3, 3.9, 93), ("38", "north dakota", 47.4, -100.3, 1.4, 3.4, 55),
    ("39", "ohio", 40.2, -82.7, 1.7, 1.9, 88), ("46", "south dakota", 44.2, -100.2, 1.5, 3.4, 66),
)
N_ALL = sum(state[-1] for state in STATES)  # 1105
_ROOTS = ("adams", "benton", "clark", "dallas", "eaton", "fulton", "grant", "harlan", "jasper", "knox",
          "logan", "marion", "newton", "orange", "perry", "rush", "story", "tama", "union", "warren")
_TAILS = ("", " hill", " ridge", " creek", " prairie", " grove", " vale", " point")


@dataclass(frozen=True)
class Counties:
    """Static properties of the synthetic counties (arrays in adm_id order)."""

    adm_id: np.ndarray
    state: np.ndarray  # Khaki lower-case state name
    name: np.ndarray  # Khaki lower-case county name
    loc_id: np.ndarray  # Khaki ID_loc: rank by (state, county name)
    lat: np.ndarray
    lon: np.ndarray
    soil_quality: np.ndarray  # latent, standard normal
    wealth: np.ndarray  # latent, standard normal, correlated with soil quality
    awc_cm_m: np.ndarray
    bulk_density: np.ndarray
    drainage_class: np.ndarray
    early_planting: np.ndarray  # bool: plants ~12 days earlier
    irrigated: np.ndarray  # bool: 60% of the area irrigated
    county_effect: np.ndarray  # t/ha
    plant_doy: np.ndarray  # mean planting day of year under the county's practice
    season_days: np.ndarray  # planting to maturity
    area_ha: np.ndarray
    ndvi_offset: np.ndarray  # first NDVI composite day in each year (0..7)

    def __len__(self) -> int:
        return len(self.adm_id)


EARLY_SHIFT_DAYS = 12.0


def draw_counties(seed: int, n: int) -> Counties:
    """Draw `n` of the 1,105 counties and their properties."""
    rng = np.random.default_rng([seed, 1])
    chosen = np.sort(rng.choice(N_ALL, size=n, replace=False))
    table = [(s, k) for s, state in enumerate(STATES) for k in range(state[-1])]
    s_idx = np.array([table[i][0] for i in chosen])
    k_idx = np.array([table[i][1] for i in chosen])
    fips = np.array([STATES[s][0] for s in s_idx])
    adm_id = np.array([f"US-{f}-{2 * k + 1:03d}" for f, k in zip(fips, k_idx, strict=True)])
    state = np.array([STATES[s][1] for s in s_idx])
    name = np.array([_ROOTS[k % 20] + _TAILS[k // 20] for k in k_idx])
    order = np.lexsort((name, state))
    loc_id = np.empty(n, dtype=np.int64)
    loc_id[order] = np.arange(n)
    geo = np.array([STATES[s][2:6] for s in s_idx], dtype=float)
    lat = geo[:, 0] + rng.uniform(-1, 1, n) * geo[:, 2]
    lon = geo[:, 1] + rng.uniform(-1, 1, n) * geo[:, 3]
    quality = rng.standard_normal(n)
    wealth = 0.35 * quality + np.sqrt(1 - 0.35**2) * rng.standard_normal(n)
    awc = np.clip(17 + 3.2 * quality + rng.normal(0, 0.8, n), 8, 28)
    bulk = np.clip(1.38 - 0.05 * quality + rng.normal(0, 0.04, n), 1.05, 1.65)
    drainage = np.clip(np.rint(3 - 0.6 * quality + rng.normal(0, 0.7, n)), 1, 5).astype(np.int64)
    early = rng.random(n) < expit(-0.3 + 1.1 * quality + 1.4 * wealth)
    west = np.clip((-lon - 96) / 6, 0, 1)
    irrigated = rng.random(n) < expit(-3.0 + 3.0 * west + 1.0 * wealth)
    plant = 118 + 1.3 * (lat - 40) + rng.normal(0, 2, n) - EARLY_SHIFT_DAYS * early
    return Counties(
        adm_id=adm_id, state=state, name=name, loc_id=loc_id, lat=lat, lon=lon, soil_quality=quality,
        wealth=wealth, awc_cm_m=awc, bulk_density=bulk, drainage_class=drainage, early_planting=early,
        irrigated=irrigated, county_effect=rng.normal(0, 0.25, n), plant_doy=plant,
        season_days=np.rint(128 - 1.5 * (lat - 40)), area_ha=np.exp(rng.normal(np.log(30000), 0.6, n)),
        ndvi_offset=rng.integers(0, 8, n),
    )


def khaki_soil(counties: Counties, seed: int) -> dict[str, np.ndarray]:
    """SoilGrids-style `<var>_mean_<depth>` columns (mapped units, integers) per county."""
    rng = np.random.default_rng([seed, 3])
    n, depth = len(counties), np.arange(6)[None, :]
    excess = (counties.awc_cm_m - 17)[:, None]
    clay = 220 + 22 * excess + 12 * depth + rng.normal(0, 15, (n, 1))
    sand = np.clip(300 - 25 * excess - 8 * depth + rng.normal(0, 20, (n, 1)), 20, 800)
    soc = 220 * np.exp(-0.45 * depth) * (1 + 0.1 * counties.soil_quality[:, None])
    values = {
        "bdod": counties.bulk_density[:, None] * 100 + 3 * depth, "cec": 120 + 0.4 * clay,
        "cfvo": np.clip(40 + 5 * depth + rng.normal(0, 10, (n, 1)), 0, None), "clay": clay,
        "nitrogen": 300 * np.exp(-0.4 * depth), "ocd": 320 * np.exp(-0.35 * depth),
        "ocs": np.repeat(55 + 10 * counties.soil_quality[:, None], 6, axis=1),
        "phh2o": 62 + 2 * depth + rng.normal(0, 3, (n, 1)), "sand": sand, "silt": 1000 - clay - sand,
        "soc": soc,
    }
    depths = ("0-5cm", "5-15cm", "15-30cm", "30-60cm", "60-100cm", "100-200cm")
    return {f"{var}_mean_{d}": np.rint(np.clip(np.broadcast_to(array, (n, 6))[:, j], 0, None))
            for var, array in values.items() for j, d in enumerate(depths)}
