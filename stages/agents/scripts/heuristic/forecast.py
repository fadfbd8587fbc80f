"""The `forecast` family: predict a withheld later period of the target from the drivers.

Per entity, the target is regressed on lagged, antecedent and seasonal features of the drivers
(`features.driver_features`; the target is never an input), one model per artifact value column
with the learner its description names. The models are fitted on every observed day before the
test period and predict every owed day. Reported metrics are estimated the way the harness
computes them, on the last fifth of the training days, with the same models refitted on the first
four fifths. A target that is never negative in training is never predicted negative.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from heuristic.features import SPANS, driver_features
from heuristic.handin import Handin, metrics_answer
from heuristic.learners import fit_predict
from heuristic.metrics import column_of, estimate
from heuristic.profile import Profile, entity_frames
from heuristic.prompt import Plan, Prompt

N_FOLDS = 2
SPIN_UP_DAYS = max(SPANS)


def time_key(prompt: Prompt) -> str:
    """The artifact key column that is not the entity key."""
    return next(k for k in prompt.artifact["key"] if k != prompt.key)


def folds(train: np.ndarray, n_folds: int) -> list[np.ndarray]:
    """`n_folds` contiguous blocks of the training rows in time order, as masks."""
    rows = np.flatnonzero(train)
    out = []
    for block in np.array_split(rows, n_folds):
        mask = np.zeros(len(train), dtype=bool)
        mask[block] = True
        out.append(mask)
    return [m for m in out if m.any()]


def predict_entity(rows: pd.DataFrame, profile: Profile, learner: str, owed: np.ndarray,
                   train: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owed predictions, validation observations, validation predictions) of one entity."""
    y = rows[profile.target].to_numpy(dtype=float)
    low = 0.0 if train.any() and np.nanmin(y[train]) >= 0 else -np.inf
    if train.sum() == 0:
        return np.zeros(owed.sum()), np.array([]), np.array([])
    predictions = np.clip(fit_predict(learner, x[train], y[train], x[owed]), low, None)
    blocks = folds(train, N_FOLDS)
    if len(blocks) < 2:
        return predictions, np.array([]), np.array([])
    check = np.full(len(y), np.nan)
    for block in blocks:
        rest = train & ~block
        check[block] = np.clip(fit_predict(learner, x[rest], y[rest], x[block]), low, None)
    scored = train & ~np.isnan(check) & (np.arange(len(y)) >= SPIN_UP_DAYS)
    return predictions, y[scored], check[scored]


def forecast(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Predict every owed row of every entity with every value column's learner."""
    rows_spec, key = prompt.artifact["rows"], time_key(prompt)
    first, last = pd.Timestamp(rows_spec["from"]), pd.Timestamp(rows_spec["to"])
    parts, checks = [], {column: {} for column in plan.learners}
    for entity, rows in entity_frames(profile).items():
        times = rows[profile.time]
        owed = ((times >= first) & (times <= last)).to_numpy()
        train = ((times < first) & rows[profile.target].notna()).to_numpy()
        x = driver_features(rows, profile.drivers, profile.time).to_numpy()
        part = pd.DataFrame({prompt.key: entity, key: times[owed].to_numpy()})
        for column, learner in plan.learners.items():
            part[column], obs, sim = predict_entity(rows, profile, learner, owed, train, x)
            checks[column][entity] = (obs, sim)
        parts.append(part)
    return Handin(pd.concat(parts, ignore_index=True), report(prompt, checks))


def report(prompt: Prompt, checks: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]) -> dict:
    """The answer document: each metric estimated on its column's validation pairs."""
    columns = list(checks)
    return metrics_answer({m["name"]: estimate(m, checks[column_of(m, columns)])
                           for m in prompt.answer.get("metrics", [])})
