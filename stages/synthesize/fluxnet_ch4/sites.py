"""Synthetic FLUXNET-CH4 wetland sites: location, climate, hydrology, methane parameters, columns.

Sites are drawn from three climate zones and countries weighted as the FLUXNET-CH4 network (mostly
boreal and temperate, some tropical; AmeriFlux sites in the contiguous US about a third of all),
with a wetland class (bog, fen, marsh, swamp, wet tundra) that sets the water-table regime and the
methane base rate. Each site measures its own subset of the optional
variables, like the real sites. `write_metadata` writes the `FLX_AA-Flx_CH4-META_*.csv` site table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

META_NAME = "FLX_AA-Flx_CH4-META_20201112135337801132.csv"
META_HEADER = ("SITE_ID,SITE_NAME,FLUXNET-CH4_DATA_POLICY,COUNTRY,LAT,LON,IGBP,SITE_CLASSIFICATION,"
               "UTC_OFFSET,YEAR_START,YEAR_END,SOIL_TEMP_PROBE_DEPTHS")
COUNTRIES = {  # zone -> (country code, lat range, lon range, weight within the zone)
    "boreal": (("CA", (52, 64), (-125, -70), 1), ("FI", (60, 69), (22, 30), 1), ("SE", (56, 68), (13, 20), 1),
               ("RU", (55, 71), (30, 160), 1), ("US", (61, 71), (-165, -145), 1)),
    "temperate": (("US", (34, 44), (-119, -84), 14), ("DE", (48, 54), (7, 14), 1), ("FR", (44, 49), (-1, 6), 1),
                  ("NL", (51, 53), (4, 6), 1), ("CN", (28, 40), (100, 122), 1), ("JP", (33, 43), (133, 143), 1),
                  ("NZ", (-46, -37), (168, 176), 1)),
    "tropical": (("BR", (-10, -2), (-60, -45), 1), ("BW", (-20, -18), (22, 24), 1), ("MY", (1, 6), (101, 118), 1),
                 ("ID", (-3, 1), (110, 115), 1)),
}
ZONE_WEIGHTS = {"boreal": 0.35, "temperate": 0.5, "tropical": 0.15}
CLASSES = {  # class -> (water-table level m, specific yield, methane rate at 10 degC nmol m-2 s-1)
    "bog": (-0.15, 0.2, 15.0), "fen": (-0.05, 0.25, 30.0), "marsh": (0.05, 0.3, 40.0),
    "swamp": (0.15, 0.3, 50.0), "wet tundra": (-0.05, 0.2, 20.0),
}
ZONE_CLASSES = {"boreal": ("bog", "fen", "wet tundra", "fen"), "temperate": ("marsh", "fen", "bog", "swamp"),
                "tropical": ("swamp", "marsh")}
OPTIONAL = {  # optional measured variable(s) -> share of sites that have them
    ("SW_OUT",): 0.5, ("LW_IN",): 0.5, ("LW_OUT",): 0.5, ("NETRAD",): 0.7, ("PPFD_IN",): 0.6,
    ("RH",): 0.85, ("P",): 0.85, ("G",): 0.4, ("WTD",): 0.75, ("WD",): 0.6,
    ("GPP_NT", "RECO_NT"): 0.7, ("GPP_DT", "RECO_DT"): 0.7,
}
_LETTERS = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


@dataclass(frozen=True)
class Site:
    """One synthetic site: identity, record, climate, hydrology, methane parameters and columns."""

    index: int
    site_id: str
    name: str
    country: str
    zone: str
    classification: str
    lat: float
    lon: float
    utc_offset_h: int
    first_day: np.datetime64
    last_day: np.datetime64
    step_min: int
    climate: dict[str, float]
    water: dict[str, float]
    flux: dict[str, float]  # q10, f10 (nmol m-2 s-1 at 10 degC, saturated), k_wtd (1/m), diurnal,
    # hysteresis (substrate share h of the flux), day_sigma (sd of the daily log anomaly)
    carbon: dict[str, float]
    measured: frozenset[str]  # optional variables this site measures
    n_ts: int  # soil temperature probes TS_1..TS_n

    @property
    def years(self) -> tuple[int, int]:
        """First and last calendar year of the record."""
        return (int(self.first_day.astype("datetime64[Y]").astype(int)) + 1970,
                int(self.last_day.astype("datetime64[Y]").astype(int)) + 1970)


def draw_sites(seed: int, n_sites: int, first_year: int, last_year: int) -> list[Site]:
    """Draw `n_sites` sites; records lie within `first_year`..`last_year` (local standard time)."""
    rng = np.random.default_rng([seed, 0])
    zones = rng.choice(list(ZONE_WEIGHTS), n_sites, p=list(ZONE_WEIGHTS.values()))
    codes: set[str] = set()
    return [_draw_site(rng, index, str(zone), first_year, last_year, codes)
            for index, zone in enumerate(zones)]


def _draw_site(rng: np.random.Generator, index: int, zone: str, first_year: int, last_year: int,
               codes: set[str]) -> Site:
    weights = np.array([country[3] for country in COUNTRIES[zone]], float)
    country, lat_range, lon_range, _ = COUNTRIES[zone][rng.choice(len(weights), p=weights / weights.sum())]
    while True:  # a code like the real mixed-case ones (BW-Gum, US-EDN, FR-LGt), unique ignoring case
        letters = "".join(rng.choice(_LETTERS, 3))
        code = letters[0] + "".join(c.lower() if rng.random() < 0.5 else c for c in letters[1:])
        if f"{country}-{code}".casefold() not in codes:
            break
    site_id = f"{country}-{code}"
    codes.add(site_id.casefold())
    lat, lon = float(rng.uniform(*lat_range)), float(rng.uniform(*lon_range))
    classification = str(rng.choice(ZONE_CLASSES[zone]))
    level, specific_yield, f10 = CLASSES[classification]
    north = abs(lat)
    n_years = last_year - first_year + 1
    start = first_year + (int(rng.integers(1, (n_years - 1) // 2 + 1)) if n_years >= 3 and rng.random() < 0.25
                          else 0)
    end_month = int(rng.integers(6, 12)) if rng.random() < 0.25 else 12
    last_day = (np.datetime64(f"{last_year}-{end_month:02d}", "M") + 1).astype("datetime64[D]") - 1
    climate = {
        "lat": lat, "lon": lon, "utc_offset_h": float(round(lon / 15)), "elev_m": float(rng.uniform(0, 600)),
        "ta_mean": 28 - 0.55 * max(north - 15, 0) + rng.normal(0, 1.0),
        "ta_amp": 1.5 + 0.3 * max(north - 10, 0) + rng.normal(0, 1.5),
        "ta_sigma": 1.0 + 0.03 * north, "dtr": float(rng.uniform(6, 12)),
        "cold_doy": 20.0 if lat >= 0 else 202.6, "wet_doy": float(rng.uniform(0, 365)),
        "wet_frac": float(rng.uniform(0.25, 0.5)),
        "wet_amp": {"tropical": 0.8, "temperate": 0.15}.get(zone, 0.3),
        "wet_mm": float(rng.uniform(4, 10)), "rh_mean": float(rng.uniform(60, 80)),
        "ws_mean": float(rng.uniform(2, 5)), "wd_mean": float(rng.uniform(0, 360)),
    }
    water = {"wtd_ref": level + rng.normal(0, 0.05), "sy": specific_yield, "relax": 0.05,
             "et_coef": float(rng.uniform(0.12, 0.2))}
    flux = {"q10": float(np.clip(np.exp(rng.normal(np.log(2.5), 0.3)), 1.3, 6.0)),
            "f10": f10 * float(np.exp(rng.normal(0, 0.3))),
            "k_wtd": float(rng.uniform(6, 14)), "diurnal": float(rng.uniform(0.05, 0.25))}
    carbon = {"gpp_max": float(rng.uniform(10, 25)), "r10": float(rng.uniform(1.2, 2.8))}
    measured = {name for names, share in OPTIONAL.items() if rng.random() < share for name in names}
    if zone == "boreal" and rng.random() < 0.6:
        measured.add("D_SNOW")
    n_ts = int(rng.integers(1, 5))
    flux |= {"hysteresis": float(rng.uniform(0.3, 0.7)), "day_sigma": float(rng.uniform(0.1, 0.3))}
    return Site(index, site_id, f"Synthetic {classification} {index + 1:02d}", country, zone, classification,
                round(lat, 5), round(lon, 5), round(lon / 15), np.datetime64(f"{start}-01-01"),
                last_day, 60 if index % 8 == 2 else 30, climate, water, flux, carbon,
                frozenset(measured), n_ts)


def write_metadata(out_dir: Path, sites: list[Site]) -> None:
    """The site table, comma-separated, one row per site in site-id order."""
    lines = [META_HEADER]
    for site in sorted(sites, key=lambda s: s.site_id):
        depths = "; ".join(f"TS_{k} = {d} cm" for k, d in zip(range(1, site.n_ts + 1), (5, 15, 30, 50),
                                                               strict=False))
        lines.append(",".join([
            site.site_id, site.name, "CCBY4.0", site.country, f"{site.lat:.5f}", f"{site.lon:.5f}", "WET",
            site.classification, str(site.utc_offset_h), *map(str, site.years), depths]))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_NAME).write_bytes(("\n".join(lines) + "\n").encode("ascii"))
