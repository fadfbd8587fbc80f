"""Run shapes the cropbench annotator scripts share: predict the owed rows, estimate, report.

A task's reproduce.py builds its panel and features, then hands one of these the parts that are its
own (the model, how many years or which counties to hold out, the metrics it reports):

- `holdout_years_run`: unseen years of known counties. The model is fitted on the public years and
  predicts the owed ones; the estimate refits without the last `check_years` public years and
  scores on them.
- `held_out_counties_run`: counties never observed (`transfer_fit_predict`). The estimate holds out
  every `every`-th public county (in sorted order) and predicts it from the rest.
- `report`: write the artifact (the owed rows) and the answer (each metric on the held rows).

Metrics are scorers of the held rows: `pooled(rmse)` over every held county-year,
`per_county(nse)` the median (or mean) over counties (`cropbench_annotator.per_entity`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from cropbench_annotator import KEY, owed_rows, per_entity, write_answer, write_artifact
from cropbench_models import transfer_fit_predict, validation_split

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
    write_answer({name: scorer(held, target) for name, scorer in metrics.items()})


def holdout_years_run(panel: pd.DataFrame, artifact: dict, target: str, column: str, predict: Predictor,
                      metrics: dict[str, Scorer], check_years: int = 3) -> None:
    """Predict the owed years into `column`; estimate `metrics` on the last `check_years` public years."""
    owed = owed_rows(panel, target)
    panel[column] = np.nan
    panel.loc[owed, column] = predict(~owed, owed)
    fit, check = validation_split(panel, ~owed, years=check_years)
    held = panel[check].assign(**{ESTIMATE: predict(fit, check)})
    report(panel, owed, artifact, held, target, metrics)


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
