"""Annotator reproduction: the mean-flow signature of unrecorded basins from their attributes.

Method (the gold; the prompt leaves the method to the agent):
1. Read the query. Runoff ratio of each gauged basin: its mean observed flow / its mean
   precipitation attribute (`p_mean_mm_d`).
2. Budyko-type regression: the runoff ratio follows Fu's curve of the aridity index,
   1 - E/P with E/P = 1 + A - (1 + A^w)^(1/w); w fitted by least squares over the gauged basins
   (grid 1.2-6), then a ridge regression of the residual on the standardised attributes (snow
   fraction, seasonality, soil, forest, slope: what the curve misses), shrunk by cross-validation.
3. The daily series of an unrecorded basin: its predicted mean flow times the mean relative flow
   (flow / own mean) of the gauged basins of its HUC-02 region (all gauged basins when none) on
   that day, which carries the shared weather and seasons.
4. Estimate: the same procedure with a seeded 30 % of the gauged basins left out.

Deterministic: closed-form fits, fixed seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_models import held_out_masks, pseudo_ungauged, read_entities, read_query

RESIDUAL_INPUTS = ["frac_snow", "p_seasonality", "high_prec_freq_d_yr", "max_water_content_m",
                   "frac_forest", "slope_mean_m_km", "geol_permeability_log10_m2"]
W_GRID = np.linspace(1.2, 6.0, 49)


def fu_runoff_ratio(aridity: np.ndarray, w: float) -> np.ndarray:
    """1 - E/P of Fu's equation, E/P = 1 + A - (1 + A^w)^(1/w)."""
    return 1 - (1 + aridity - (1 + aridity**w) ** (1 / w))


def mean_flow(entities: pd.DataFrame, ratio: pd.Series, wanted: list[str]) -> pd.Series:
    """Predicted mean flow (mm/d) of the `wanted` basins from the gauged basins' runoff ratios."""
    aridity = entities["aridity"].to_numpy(dtype=float)
    gauged = entities.index.isin(ratio.index)
    y = ratio.reindex(entities.index[gauged]).to_numpy()
    w = min(W_GRID, key=lambda w: np.sum((fu_runoff_ratio(aridity[gauged], w) - y) ** 2))
    curve = fu_runoff_ratio(aridity, w)
    x = entities[RESIDUAL_INPUTS].astype(float)
    x = ((x - x[gauged].mean()) / x[gauged].std(ddof=0).replace(0, 1.0)).fillna(0.0).to_numpy()
    residual = y - curve[gauged]
    lam = len(y) * 2.0  # strong ridge penalty: few gauged basins
    coef = np.linalg.solve(x[gauged].T @ x[gauged] + lam * np.eye(x.shape[1]), x[gauged].T @ residual)
    ratio_all = np.clip(curve + x @ coef, 0.01, 1.0)
    predicted = pd.Series(ratio_all * entities["p_mean_mm_d"].to_numpy(), index=entities.index)
    return predicted.loc[wanted]


def reconstruct(q, entities: pd.DataFrame, gauged: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Daily series of the `wanted` rows from the `gauged` rows only."""
    flow = pd.Series(np.where(gauged, q.obs, np.nan), index=q.frame.index)
    means = flow.groupby(q.basins).mean()
    ratio = (means / entities["p_mean_mm_d"]).dropna()
    target = mean_flow(entities, ratio, sorted(set(q.basins[wanted])))
    relative = flow / pd.Series(q.basins).map(means).to_numpy()
    region = pd.Series(q.basins).map(entities["huc_02"].astype(str)).to_numpy()
    day = q.frame["date"].to_numpy()
    table = pd.DataFrame({"region": region, "day": day, "rel": relative.to_numpy()})
    by_region = table.groupby(["region", "day"])["rel"].mean()
    by_day = table.groupby("day")["rel"].mean()
    shape = by_region.reindex(pd.MultiIndex.from_arrays([region[wanted], day[wanted]])).to_numpy()
    shape = np.where(np.isnan(shape), by_day.reindex(day[wanted]).to_numpy(), shape)
    return np.nan_to_num(shape, nan=1.0) * target.reindex(q.basins[wanted]).to_numpy()


def main() -> None:
    """Reconstruct the unrecorded basins; write the artifact and answer.json."""
    q = read_query([])
    entities = read_entities(Path("data"), q.scope)
    held, public = held_out_masks(q)
    check = pseudo_ungauged(q.basins, public)
    sim, obs = reconstruct(q, entities, public & ~check, check), q.obs[check]
    frame = pd.DataFrame({"b": q.basins[check], "y": q.frame["date"][check].dt.year.to_numpy(),
                          "o": obs, "s": sim}).dropna()
    volume = frame.groupby("b").apply(lambda g: abs((g["s"] - g["o"]).sum()) / g["o"].sum())
    annual = frame.groupby(["b", "y"])[["o", "s"]].mean()
    q.write_rows(held, {"qsim_mm_d": reconstruct(q, entities, public, held)})
    write_answer(metrics={"mean_flow_error": round(float(volume.median()), 6),
                          "annual_rmse_mm_d": round(float(np.sqrt(((annual["s"] - annual["o"]) ** 2).mean())), 6)})


if __name__ == "__main__":
    main()
