"""How close the synthetic CAMELS-US files come to their own truth: the figures of a realism check.

Reads the written files and re-creates the generator's truth (same params, same seed), then
reports:

- `perfect_model_nse_median`: the generator's own fixed-parameter model with each basin's true
  parameters, run on the PUBLISHED forcing, scored against the published discharge (Nash and
  Sutcliffe 1970), median over basins. It bounds what any model can do; on real CAMELS the best
  published models reach a median NSE of about 0.74-0.76 (Kratzert et al. 2019,
  doi:10.5194/hess-23-5089-2019), so values near 1 mean the data are too clean.
- `climatology_nse_median`: the day-of-year mean of each basin's observed discharge (fitted on
  the whole record, so slightly optimistic) as the prediction.
- `region_r2`: share of the between-basin variance of three `camels_hydro.txt` signatures that
  the HUC-02 region explains (one-way ANOVA R^2).
- `swe_relative_error`: median over snowy basins of sum|published - true SWE| / sum(true SWE);
  `swe_volume_ratio`: median of sum(published) / sum(true).
- `prcp_undercatch`: published / true precipitation totals, median over basins, for all days and
  for days whose true precipitation falls entirely as rain or as snow.

Run `python -m stages.synthesize.camels_us.realism [--profile P] [--raw-dir DIR]`; without
`--raw-dir` the profile's files are generated into a temporary folder first.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from stages.params import load_params
from stages.scoring.query.metrics import MetricUndefined, nse
from stages.sources import camels_us as reader
from stages.sources.camels_us import read_attributes
from stages.synthesize import camels_us
from stages.synthesize.camels_us import model
from stages.synthesize.camels_us.basins import draw_basins

SIGNATURES = {"runoff_ratio": "runoff_ratio", "baseflow_index": "baseflow_index",
              "high_q_freq": "high_q_freq_d_yr"}  # camels_hydro name -> reader column
SNOWY_MM = 10.0  # basins whose true snowpack ever exceeds this enter the SWE figures


def measure(raw_dir: Path, params: camels_us.Params) -> dict:
    """Realism figures of the files under `raw_dir`, written by `camels_us.write(_, params)`."""
    basins = draw_basins(params.seed, params.n_basins)
    doy = camels_us.calendar(params)["doy"]
    scores: dict[str, list[float]] = {key: [] for key in
                                      ("perfect", "climatology", "swe_error", "swe_ratio",
                                       "catch_all", "catch_rain", "catch_snow")}
    for start in range(0, params.n_basins, camels_us.CHUNK):
        chunk = np.arange(start, min(start + camels_us.CHUNK, params.n_basins))
        truth = camels_us.simulate(params, basins, chunk)
        files = read_published(raw_dir, basins.gauge_id[chunk])
        pet = camels_us.published_pet(doy, files["lat_deg"], files["tmax"], files["tmin"])
        tmean = (files["tmax"] + files["tmin"]) / 2
        _, catchment = basins.model_parameters(chunk)
        _, simulated = model.simulate_runoff(files["prcp"], tmean, pet, catchment)
        for column in range(len(chunk)):
            obs = files["q_mm_d"][:, column]
            scores["perfect"].append(_nse_or_nan(obs, simulated[:, column]))
            scores["climatology"].append(_nse_or_nan(obs, doy_climatology(obs, doy)))
        _collect_forcing_errors(scores, files, truth)
    attributes = read_attributes(raw_dir).set_index("gauge_id").loc[list(basins.gauge_id)]
    regions = attributes["huc_02"].to_numpy()
    return {
        "n_basins": params.n_basins, "years": params.last_year - params.first_year + 1,
        "perfect_model_nse_median": _median(scores["perfect"]),
        "perfect_model_nse_range": [_round(np.nanmin(scores["perfect"])),
                                    _round(np.nanmax(scores["perfect"]))],
        "climatology_nse_median": _median(scores["climatology"]),
        "region_r2": {name: _round(region_r2(attributes[column].to_numpy(float), regions))
                      for name, column in SIGNATURES.items()},
        "swe_relative_error": _median(scores["swe_error"]),
        "swe_volume_ratio": _median(scores["swe_ratio"]),
        "prcp_undercatch": {"all_days": _median(scores["catch_all"]),
                            "rain_days": _median(scores["catch_rain"]),
                            "snow_days": _median(scores["catch_snow"])},
    }


def read_published(raw_dir: Path, gauges: np.ndarray) -> dict[str, np.ndarray]:
    """Published forcing and discharge (mm/d, NaN on gaps) of `gauges`, arrays (days, basins)."""
    columns: dict[str, list[np.ndarray]] = {}
    for gauge in gauges:
        forcing, header = reader.read_forcings(raw_dir, gauge, "daymet")
        flow = reader.read_streamflow(raw_dir, gauge, header.area_m2)
        values = {"prcp": forcing["prcp_mm_d"], "tmax": forcing["tmax_c"],
                  "tmin": forcing["tmin_c"], "swe": forcing["swe_mm"], "q_mm_d": flow["qobs_mm_d"]}
        for name, series in values.items():
            columns.setdefault(name, []).append(series.to_numpy(dtype=float))
        columns.setdefault("lat_deg", []).append(np.asarray(header.lat_deg, dtype=float))
    return {name: np.stack(parts, axis=-1) for name, parts in columns.items()}


def doy_climatology(q: np.ndarray, doy: np.ndarray) -> np.ndarray:
    """Each day's prediction is the mean observed discharge of its day of year (NaN skipped)."""
    sums = np.bincount(doy, weights=np.nan_to_num(q), minlength=367)
    counts = np.bincount(doy, weights=np.isfinite(q).astype(float), minlength=367)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts)[doy]


def region_r2(values: np.ndarray, regions: np.ndarray) -> float:
    """One-way ANOVA R^2: 1 - within-region / total sum of squares, over finite values."""
    keep = np.isfinite(values)
    values, regions = values[keep], regions[keep]
    total = float(np.sum((values - values.mean()) ** 2))
    if total == 0:
        raise MetricUndefined("the signature is constant across basins")
    within = sum(float(np.sum((values[regions == r] - values[regions == r].mean()) ** 2))
                 for r in np.unique(regions))
    return 1.0 - within / total


def _collect_forcing_errors(scores: dict[str, list[float]], files: dict[str, np.ndarray],
                            truth: dict[str, np.ndarray]) -> None:
    share = model.snowfall_share(truth["true_tmean"])
    true_p, published_p = truth["true_prcp"], files["prcp"]
    for column in range(true_p.shape[1]):
        p, q, s = true_p[:, column], published_p[:, column], share[:, column]
        scores["catch_all"].append(q.sum() / p.sum())
        scores["catch_rain"].append(q[s == 0].sum() / p[s == 0].sum())
        scores["catch_snow"].append(q[s == 1].sum() / p[s == 1].sum() if p[s == 1].sum() > 0
                                    else np.nan)
        swe, true_swe = files["swe"][:, column], truth["true_swe"][:, column]
        if true_swe.max() > SNOWY_MM:
            scores["swe_error"].append(np.abs(swe - true_swe).sum() / true_swe.sum())
            scores["swe_ratio"].append(swe.sum() / true_swe.sum())


def _nse_or_nan(obs: np.ndarray, sim: np.ndarray) -> float:
    try:
        return nse(obs, sim)
    except MetricUndefined:
        return float("nan")


def _median(values: list[float]) -> float | None:
    finite = [v for v in values if np.isfinite(v)]
    return _round(np.median(finite)) if finite else None


def _round(value: float) -> float:
    return round(float(value), 4)


def main() -> None:
    """Print the realism figures of a profile's synthetic CAMELS-US files as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--profile", choices=["tiny", "default", "full"], default=None)
    parser.add_argument("--raw-dir", type=Path, default=None,
                        help="files written with this profile's params (default: generate them)")
    args = parser.parse_args()
    project = load_params()
    section = project.synthesize["camels_us"]
    params = camels_us.Params(**section.params, **section.scales[args.profile or project.profile])
    if args.raw_dir is not None:
        print(json.dumps(measure(args.raw_dir, params), indent=2))
        return
    with tempfile.TemporaryDirectory() as folder:
        camels_us.write(Path(folder), params)
        print(json.dumps(measure(Path(folder), params), indent=2))


if __name__ == "__main__":
    main()
