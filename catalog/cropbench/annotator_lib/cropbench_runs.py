"""Run shapes the cropbench annotator scripts share: predict the owed rows, estimate, report.

A task's reproduce.py builds its panel and features, then hands one of these the parts that are its
own (the model, how many years or which counties to hold out, the metrics it reports):

- `holdout_years_run`: unseen years of known counties. The model is fitted on the public years and
  predicts the owed ones; the estimate refits without the last `check_years` public years and
  scores on them.
- `held_out_counties_run`: counties never observed (`transfer_fit_predict`). The estimate holds out
  every `every`-th public county (in sorted order) and predicts it from the rest.
- `panel_years_run`: `holdout_years_run` with the panel model on every feature column.
- `report`: write the artifact (the owed rows) and the answer (each metric on the held rows).
- `cluster_profiles`: the clustering tasks' partition of the counties, its labels and silhouette.

Metrics are scorers of the held rows: `pooled(rmse)` over every held county-year,
`per_county(nse)` the median (or mean) over counties (`cropbench_annotator.per_entity`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_artifact_spec, read_scope, write_answer, write_artifact
from cropbench_annotator import KEY, YEAR, feature_columns, owed_rows, per_entity, read_table
from cropbench_models import best_kmeans, panel_fit_predict, profile_space, transfer_fit_predict, validation_split

ESTIMATE = "estimate"

Scorer = Callable[[pd.DataFrame, str], float]  # (held rows with `estimate`, target) -> metric
Predictor = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (fit rows, new rows) -> predictions


def pooled(metric: Callable[[np.ndarray, np.ndarray], float]) -> Scorer:
    """`metric(observed, estimate)` over every held county-year."""
    return lambda held, target: metric(held[target], held[ESTIMATE])


def per_county(metric: Callable[[np.ndarray, np.ndarray], float], how: str = "median") -> Scorer:
    """`metric` per held county, then its median or mean (`per_entity`)."""
    return lambda held, target: per_entity(held, target, ESTIMATE, metric, how)


def report(panel: pd.DataFrame, owed: np.ndarray, artifact: dict, held: pd.DataFrame, target: str,
           metrics: dict[str, Scorer]) -> None:
    """Write the owed rows as the artifact and each metric of the held rows as the answer."""
    write_artifact(panel[owed], artifact)
    write_answer(metrics={name: scorer(held, target) for name, scorer in metrics.items()})


def holdout_years_run(panel: pd.DataFrame, artifact: dict, target: str, column: str, predict: Predictor,
                      metrics: dict[str, Scorer], check_years: int = 3) -> None:
    """Predict the owed years into `column`; estimate `metrics` on the last `check_years` public years."""
    owed = owed_rows(panel, target)
    panel[column] = np.nan
    panel.loc[owed, column] = predict(~owed, owed)
    fit, check = validation_split(panel, ~owed, years=check_years)
    held = panel[check].assign(**{ESTIMATE: predict(fit, check)})
    report(panel, owed, artifact, held, target, metrics)


def panel_years_run(panel: pd.DataFrame, artifact: dict, target: str, metrics: dict[str, Scorer],
                    check_years: int = 3, column: str = "yield_pred_t_ha", **model) -> None:
    """`holdout_years_run` with `panel_fit_predict` (county fixed effects, linear trend, ridge on the
    county-demeaned features, boosted trees on its residuals; `model`: its options) on every
    feature column of `panel` (`feature_columns`)."""
    features = feature_columns(panel)
    holdout_years_run(panel, artifact, target, column,
                      lambda fit, new: panel_fit_predict(panel, fit, new, target, features, **model),
                      metrics, check_years)


def held_out_counties_run(panel: pd.DataFrame, entities: pd.DataFrame, artifact: dict, target: str,
                          column: str, features: list[str], metrics: dict[str, Scorer], every: int = 3) -> None:
    """Predict the owed counties into `column`; estimate `metrics` on every `every`-th public county."""
    owed = owed_rows(panel, target)
    panel[column] = np.nan
    panel.loc[owed, column] = transfer_fit_predict(panel, entities, ~owed, owed, target, features)
    public = sorted(panel.loc[~owed, KEY].unique())
    check = panel[KEY].isin(public[::every]).to_numpy() & ~owed
    estimate = transfer_fit_predict(panel, entities, ~owed & ~check, check, target, features)
    report(panel, owed, artifact, panel[check].assign(**{ESTIMATE: estimate}), target, metrics)


def cluster_profiles(table: str, column: str, features: list[str]) -> None:
    """The profile-clustering tasks: the scope's counties partitioned on `features` of `column`.

    Reads `column` of the query's `table` (`timeseries`: daily, by date; `yields`: yearly, each
    harvest year at its 1 January), builds the z-scored profile space (`profile_space`), keeps the
    k-means partition of the highest mean silhouette (`best_kmeans`: k-means++, 50 restarts, fixed
    seed, k = 2 .. min(6, n - 1), ties to the smaller k), and writes the labels as the artifact
    (`cluster`) and their silhouette as the answer.
    """
    scope, artifact = read_scope(), read_artifact_spec()
    if table == "yields":
        frame = read_table(Path("data"), table, scope, [KEY, YEAR, column])
        frame["time"] = pd.to_datetime(frame[YEAR].astype(str) + "-01-01")
        space = profile_space(frame, "time", column, features)
    else:
        space = profile_space(read_table(Path("data"), table, scope, [KEY, "date", column]), "date", column, features)
    labels, score = best_kmeans(space)
    write_artifact(pd.DataFrame({KEY: space.index, "cluster": labels.astype(int)}), artifact)
    write_answer(metrics={"silhouette": score})
