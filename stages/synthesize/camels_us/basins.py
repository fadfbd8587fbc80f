"""Synthetic CAMELS-US basins: regions, gauge ids, static attributes and model parameters.

Also writes the seven `camels_attributes_v2.0` files with the real files' columns, `;`-separated,
`NA` for missing values and 15 significant digits, as the distribution does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from stages.synthesize.camels_us import model


@dataclass(frozen=True)
class Region:
    """Climate, landscape and runoff-response character of one HUC-02 region."""

    huc: str
    usgs_prefix: str  # first two digits of the region's USGS station ids
    states: tuple[str, ...]
    lat: tuple[float, float]
    lon: tuple[float, float]
    elev_m: tuple[float, float]
    # t_offset, t_continentality, t_sigma, p_mean, p_amp, p_peak_doy, wet_frac, gamma_shape,
    # orographic gain per km, dtr, dew depression, k_rs
    climate: tuple[float, ...]
    slope_m_km: tuple[float, float]
    forest: tuple[float, float]
    sand_pct: tuple[float, float]
    soil_depth_m: tuple[float, float]
    covers: tuple[str, str]  # dominant land cover when forested / when open
    geology: tuple[str, ...]  # most to least common first class
    response: tuple[float, ...]  # f_quick, k_quick, k_slow, beta, ddf, threshold_mm, leak


REGIONS = (
    Region("01", "01", ("ME", "NH", "VT", "MA"), (42.0, 47.0), (-73.3, -67.9), (100, 700),
           (0.0, 1.0, 4.0, 3.3, 0.10, 320, 0.42, 0.75, 0.2, 11.0, 1.0, 0.19), (10, 60),
           (0.75, 1.0), (30, 65), (1.0, 1.5), ("Mixed Forests", "Deciduous Broadleaf Forest"),
           ("Metamorphics", "Acid plutonic rocks", "Siliciclastic sedimentary rocks",
            "Unconsolidated sediments"), (0.35, 0.35, 0.012, 2.0, 2.5, 0, 0)),
    Region("03", "02", ("GA", "NC", "SC", "AL"), (30.5, 36.0), (-86.5, -78.5), (30, 600),
           (0.0, 1.5, 3.0, 3.6, 0.15, 200, 0.33, 0.6, 0.2, 12.5, 1.0, 0.19), (3, 60),
           (0.5, 0.95), (25, 75), (1.3, 1.5), ("Woody Savannas", "Croplands"),
           ("Metamorphics", "Unconsolidated sediments", "Siliciclastic sedimentary rocks",
            "Acid plutonic rocks"), (0.35, 0.25, 0.008, 2.5, 3.0, 0, 0)),
    Region("10", "06", ("MT", "WY", "NE", "KS", "SD"), (39.0, 48.5), (-111.0, -97.0), (500, 1800),
           (2.0, 3.0, 4.5, 1.4, 0.60, 160, 0.22, 0.55, 0.5, 15.0, 5.0, 0.16), (2, 25),
           (0.0, 0.35), (15, 60), (1.0, 1.5), ("Woody Savannas", "Grasslands"),
           ("Siliciclastic sedimentary rocks", "Mixed sedimentary rocks",
            "Unconsolidated sediments", "Carbonate sedimentary rocks"),
           (0.5, 0.5, 0.01, 3.0, 3.5, 1, 0.003)),
    Region("14", "09", ("CO", "UT", "WY"), (37.0, 41.0), (-109.5, -105.7), (2300, 3400),
           (1.5, 2.0, 3.5, 2.2, 0.20, 75, 0.38, 0.7, 0.35, 15.0, 4.0, 0.16), (60, 200),
           (0.3, 0.9), (35, 70), (0.4, 1.1), ("Evergreen Needleleaf Forest", "Open Shrublands"),
           ("Metamorphics", "Acid plutonic rocks", "Siliciclastic sedimentary rocks",
            "Mixed sedimentary rocks"), (0.3, 0.2, 0.01, 1.5, 3.5, 0, 0.004)),
    Region("17", "12", ("WA", "OR", "ID"), (43.5, 48.8), (-123.8, -116.5), (200, 1800),
           (5.0, -4.0, 2.5, 3.2, 0.75, 355, 0.5, 0.8, 0.5, 11.0, 2.0, 0.19), (40, 200),
           (0.6, 1.0), (25, 60), (0.6, 1.5), ("Evergreen Needleleaf Forest", "Grasslands"),
           ("Basic volcanic rocks", "Acid volcanic rocks", "Pyroclastics", "Metamorphics"),
           (0.45, 0.3, 0.012, 1.5, 3.0, 0, 0.002)),
)
GEOLOGY = {  # GLiM class -> (porosity, log10 permeability in m2), typical GLHYMPS values
    "Unconsolidated sediments": (0.22, -12.5), "Siliciclastic sedimentary rocks": (0.12, -14.0),
    "Mixed sedimentary rocks": (0.10, -13.7), "Carbonate sedimentary rocks": (0.10, -12.8),
    "Metamorphics": (0.05, -14.8), "Acid plutonic rocks": (0.05, -14.5),
    "Basic volcanic rocks": (0.12, -12.6), "Acid volcanic rocks": (0.10, -13.5),
    "Pyroclastics": (0.15, -13.0),
}
FILE_COLUMNS = {
    "name": "huc_02 gauge_name",
    "topo": "gauge_lat gauge_lon elev_mean slope_mean area_gages2 area_geospa_fabric",
    "clim": "p_mean pet_mean p_seasonality frac_snow aridity high_prec_freq high_prec_dur"
    " high_prec_timing low_prec_freq low_prec_dur low_prec_timing",
    "hydro": "q_mean runoff_ratio slope_fdc baseflow_index stream_elas q5 q95 high_q_freq"
    " high_q_dur low_q_freq low_q_dur zero_q_freq hfd_mean",
    "soil": "soil_depth_pelletier soil_depth_statsgo soil_porosity soil_conductivity"
    " max_water_content sand_frac silt_frac clay_frac water_frac organic_frac other_frac",
    "geol": "geol_1st_class glim_1st_class_frac geol_2nd_class glim_2nd_class_frac"
    " carbonate_rocks_frac geol_porostiy geol_permeability",
    "vege": "frac_forest lai_max lai_diff gvf_max gvf_diff dom_land_cover_frac dom_land_cover"
    " root_depth_50 root_depth_99",
}
SPREAD = {  # sd of per-basin jitter of the widest-spread parameters (log space; f_quick additive)
    "p_mean": 0.45, "s_max": 0.5, "k_quick": 0.7, "k_slow": 0.6, "f_quick": 0.2, "threshold": 1.0,
}
NAMES = ("Alder", "Bear", "Beaver", "Birch", "Cedar", "Clear", "Deer", "Elk", "Fox", "Granite",
         "Hemlock", "Laurel", "Maple", "Mill", "Otter", "Pine", "Rock", "Salmon", "Sandy",
         "Spring", "Stony", "Trout", "Willow", "Wolf")
WATERS = ("River", "Creek", "Brook", "Fork", "Run")
TOWNS = ("Ashford", "Bridgeton", "Cedarville", "Dayton", "Easton", "Fairview", "Glenwood",
         "Hillsboro", "Kingston", "Lakeside", "Milford", "Newport", "Oakdale", "Riverton",
         "Salem", "Troy", "Union", "Westfield")


@dataclass(frozen=True)
class Basins:
    """All synthetic basins, sorted by gauge id; arrays of shape (basins,)."""

    gauge_id: np.ndarray
    huc: np.ndarray
    header_lat_deg: np.ndarray
    header_elev_m: np.ndarray
    header_area_m2: np.ndarray  # int64
    gamma_shape: np.ndarray
    static: dict[str, np.ndarray]  # CAMELS name -> values, for the name/topo/soil/geol/vege files
    climate: model.Climate
    catchment: model.Catchment

    def model_parameters(self, chunk: np.ndarray) -> tuple[model.Climate, model.Catchment]:
        """Climate and catchment parameters of the basins at positions `chunk`."""
        return _take(self.climate, chunk), _take(self.catchment, chunk)


def draw_basins(seed: int, n_basins: int) -> Basins:
    """Draw ids, locations, static attributes and model parameters of `n_basins` basins."""
    rng = np.random.default_rng([seed, 0])
    region = np.sort(np.arange(n_basins) % len(REGIONS))
    regions = [REGIONS[r] for r in region]
    ids = np.empty(n_basins, dtype=object)
    for r, spec in enumerate(REGIONS):  # unique station numbers, sorted within the region
        where = np.flatnonzero(region == r)
        numbers = np.sort(rng.choice(np.arange(100, 9900), size=len(where), replace=False))
        tails = np.where(rng.random(len(where)) < 0.7, 0, rng.integers(1, 100, len(where)))
        labels = [f"{n:04d}{t:02d}" for n, t in zip(numbers, tails, strict=True)]
        ids[where] = [spec.usgs_prefix + label for label in labels]
    s = _static_attributes(rng, regions)
    clim = np.array([r.climate for r in regions]).T
    resp = np.array([r.response for r in regions]).T
    lat = np.round(s["gauge_lat"] + rng.normal(0, 0.08, n_basins), 2)
    elev_km = s["elev_mean"] / 1000
    above = elev_km - np.array([r.elev_m[0] for r in regions]) / 1000

    def jitter(sigma: float) -> np.ndarray:
        return rng.lognormal(0, sigma, n_basins)

    # Wide per-basin jitter: within a region, climate and response vary about as much as between
    # regions (as in the real CAMELS), so the region alone does not predict a basin's signatures.
    climate = model.Climate(
        lat_deg=lat, t_amp_c=4 + 0.5 * (lat - 26) + clim[1], t_sigma_c=clim[2],
        t_mean_c=25 - 0.85 * (lat - 26) - 5.0 * elev_km + clim[0] + rng.normal(0, 1.5, n_basins),
        p_mean_mm_d=np.minimum(clim[3] * (1 + clim[8] * above) * jitter(SPREAD["p_mean"]), 9.0),
        p_amp=np.clip(clim[4] * jitter(0.3), 0, 0.9),
        p_peak_doy=clim[5] + rng.normal(0, 25, n_basins),
        wet_frac=np.clip(clim[6] * jitter(0.15), 0.1, 0.7),
        dtr_c=clim[9] + rng.normal(0, 1.5, n_basins),
        dew_depression_c=clim[10] * jitter(0.1), k_rs=clim[11],
    )
    permeability = s["geol_permeability"] + 14
    quick = (resp[0] + 0.08 * np.log(s["slope_mean"] / 30) - 0.06 * permeability
             + 0.004 * (s["clay_frac"] - 20) + rng.normal(0, SPREAD["f_quick"], n_basins))
    # some basins of every region lose water to deep aquifers or lie above the water table
    losing = rng.random(n_basins) < 0.4
    catchment = model.Catchment(
        s_max_mm=np.clip(300 * s["max_water_content"] * jitter(SPREAD["s_max"]), 40, 500),
        beta=resp[3] * jitter(0.35), f_quick=np.clip(quick, 0.1, 0.9),
        k_quick_d=np.clip(resp[1] * (s["area_gages2"] / 300) ** -0.15 * jitter(SPREAD["k_quick"]),
                          0.05, 0.9),
        k_slow_d=np.clip(resp[2] * 10 ** (0.15 * permeability) * jitter(SPREAD["k_slow"]),
                         0.002, 0.2),
        ddf_mm_c_d=resp[4] * (1 - 0.3 * s["frac_forest"]) * jitter(0.2),
        threshold_mm=(resp[5] * jitter(SPREAD["threshold"])
                      + losing * rng.uniform(0, 8, n_basins)),
        leak_d=resp[6] * jitter(0.5) + losing * rng.uniform(0, 0.015, n_basins),
    )
    area_m2 = np.rint(s["area_gages2"] * 1e6 * (1 + rng.normal(0, 0.02, n_basins)))
    elev = np.round(s["elev_mean"] * rng.uniform(0.9, 1.1, n_basins), 2)
    hucs = np.array([r.huc for r in regions])
    return Basins(ids, hucs, lat, elev, area_m2.astype(np.int64), clim[7], s, climate, catchment)


def write_attributes(out_dir: Path, basins: Basins, derived: dict[str, np.ndarray]) -> None:
    """Write the seven attribute files; `derived` holds the clim and hydro columns."""
    values = basins.static | derived
    folder = out_dir / "camels_attributes_v2.0"
    folder.mkdir(parents=True, exist_ok=True)
    for group, names in FILE_COLUMNS.items():
        columns = names.split()
        lines = [";".join(["gauge_id", *columns])]
        for i, gauge in enumerate(basins.gauge_id):
            lines.append(";".join([gauge, *(_format(values[name][i]) for name in columns)]))
        (folder / f"camels_{group}.txt").write_bytes(("\n".join(lines) + "\n").encode("ascii"))


def _format(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "NA"
    return value if isinstance(value, str) else f"{float(value):.15g}"


def _take(parameters, chunk: np.ndarray):
    return type(parameters)(**{f.name: getattr(parameters, f.name)[chunk]
                               for f in fields(parameters)})


def _static_attributes(rng: np.random.Generator, regions: list[Region]) -> dict[str, np.ndarray]:
    """Name, topography, soil, geology and vegetation attributes with realistic ranges."""
    n = len(regions)

    def uniform(name: str) -> np.ndarray:
        lo, hi = np.array([getattr(r, name) for r in regions], dtype=float).T
        return lo + (hi - lo) * rng.random(n)

    s: dict[str, np.ndarray] = {"huc_02": np.array([r.huc for r in regions], dtype=object)}
    upper = rng.random(n) < 0.5  # the distribution mixes "Bear Creek near X" and "BEAR CREEK NR X"
    s["gauge_name"] = np.array([
        (f"{rng.choice(NAMES)} {rng.choice(WATERS)} near {rng.choice(TOWNS)}, "
         f"{rng.choice(r.states)}") for r in regions], dtype=object)
    s["gauge_name"][upper] = [n.upper().replace(" NEAR ", " NR ") for n in s["gauge_name"][upper]]
    s["gauge_lat"], s["gauge_lon"] = np.round(uniform("lat"), 5), np.round(uniform("lon"), 5)
    s["elev_mean"] = np.round(uniform("elev_m"), 2)
    s["slope_mean"] = np.round(uniform("slope_m_km"), 5)
    s["area_gages2"] = np.round(np.clip(rng.lognormal(np.log(300), 0.9, n), 10, 5000), 1)
    s["area_geospa_fabric"] = np.round(s["area_gages2"] * (1 + abs(rng.normal(0.03, 0.03, n))), 2)
    median_depth = np.array([0.7 if r.huc in ("14", "17") else 1.3 for r in regions])
    s["soil_depth_pelletier"] = np.clip(rng.lognormal(np.log(median_depth), 0.6), 0.27, 50)
    s["soil_depth_statsgo"] = uniform("soil_depth_m")
    s["sand_frac"] = uniform("sand_pct")
    s["clay_frac"] = rng.uniform(4, np.minimum(45, 96 - s["sand_frac"]))
    s["silt_frac"] = 100 - s["sand_frac"] - s["clay_frac"]
    porosity = 0.40 + 0.002 * (s["clay_frac"] - 20) + rng.normal(0, 0.02, n)
    s["soil_porosity"] = np.clip(porosity, 0.37, 0.68)
    # Cosby et al. (1984) pedotransfer function, inch/h -> cm/h
    s["soil_conductivity"] = 2.54 * 10 ** (-0.6 + 0.0126 * s["sand_frac"] - 0.0064 * s["clay_frac"])
    s["max_water_content"] = s["soil_porosity"] * s["soil_depth_statsgo"]
    s["water_frac"] = np.where(rng.random(n) < 0.2, rng.uniform(0, 5, n), 0.0)
    s["organic_frac"] = np.where(rng.random(n) < 0.15, rng.uniform(0, 10, n), 0.0)
    s["other_frac"] = rng.uniform(0, 4, n)
    geology = np.array([r.geology for r in regions], dtype=object)
    order = np.argsort(rng.random((n, 4)) / np.array([0.4, 0.3, 0.2, 0.1]), axis=1)
    first, second = geology[np.arange(n), order[:, 0]], geology[np.arange(n), order[:, 1]]
    frac1 = np.where(rng.random(n) < 0.2, 1.0, rng.uniform(0.35, 0.99, n))
    frac2 = np.where(frac1 < 1, (1 - frac1) * rng.uniform(0.4, 1.0, n), 0.0)
    props = np.array([[GEOLOGY[c] for c in pair] for pair in zip(first, second, strict=True)])
    mix = (frac1[:, None] * props[:, 0] + frac2[:, None] * props[:, 1]) / (frac1 + frac2)[:, None]
    s["geol_1st_class"], s["glim_1st_class_frac"] = first, frac1
    s["geol_2nd_class"] = np.where(frac1 < 1, second, None)
    s["glim_2nd_class_frac"] = frac2
    carbonate = "Carbonate sedimentary rocks"
    s["carbonate_rocks_frac"] = frac1 * (first == carbonate) + frac2 * (second == carbonate)
    porosity = np.round(np.clip(mix[:, 0] + rng.normal(0, 0.02, n), 0.01, 0.28), 4)
    s["geol_porostiy"] = np.where(rng.random(n) < 0.005, np.nan, porosity)
    s["geol_permeability"] = np.round(np.clip(mix[:, 1] + rng.normal(0, 0.4, n), -16.5, -10.9), 4)
    s["frac_forest"] = np.round(uniform("forest"), 4)
    leafy = s["frac_forest"] ** 0.8 * rng.uniform(0.8, 1.1, n)
    s["lai_max"] = np.clip(0.4 + 4.6 * leafy, 0.37, 5.6)
    s["lai_diff"] = s["lai_max"] * rng.uniform(0.45, 0.85, n)
    s["gvf_max"] = np.clip(0.3 + 0.6 * s["frac_forest"] * rng.uniform(0.85, 1.05, n), 0.18, 0.92)
    s["gvf_diff"] = s["gvf_max"] * rng.uniform(0.15, 0.6, n)
    covers = np.array([r.covers for r in regions], dtype=object)
    forested = s["frac_forest"] >= 0.5
    dominant_cover = covers[np.arange(n), (~forested).astype(int)]
    s["dom_land_cover"] = np.array(["    " + c for c in dominant_cover], dtype=object)  # as real
    dominant = np.maximum(s["frac_forest"], 1 - s["frac_forest"])
    s["dom_land_cover_frac"] = np.clip(dominant * rng.uniform(0.6, 1.0, n), 0.31, 1.0)
    no_roots = rng.random(n) < 0.035
    s["root_depth_50"] = np.where(no_roots, np.nan, rng.uniform(0.12, 0.25, n))
    s["root_depth_99"] = np.where(no_roots, np.nan, rng.uniform(1.5, 3.1, n))
    return s
