"""The `transfer` family: predict the target of entities where it was never measured.

One model, pooled over the public entities' observed rows, maps a row's driver features
(`features.driver_features`; the target is never an input) and its entity's static attributes to
the target, and predicts every owed row of the held-out entities: regionalisation, the standard
approach to ungauged or unmonitored places. Reported metrics are estimated by leaving entities
out: the public entities are dealt into two groups, each predicted by the model fitted on the
other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from heuristic.features import driver_features
from heuristic.forecast import report, time_key
from heuristic.handin import Handin
from heuristic.learners import fit_predict
from heuristic.profile import Profile, entity_frames
from heuristic.prompt import Plan, Prompt

N_GROUPS = 2


def entity_matrix(rows: pd.DataFrame, profile: Profile) -> np.ndarray:
    """Driver features of one entity's rows, with its static attributes as constant columns."""
    x = driver_features(rows, profile.drivers, profile.time).to_numpy()
    if profile.entities is None or not profile.attributes:
        return x
    table = profile.entities[profile.attributes].astype(float)
    entity = str(rows[profile.key].iloc[0])
    values = table.loc[entity].fillna(table.mean()).fillna(0.0).to_numpy() if entity in table.index \
        else table.mean().fillna(0.0).to_numpy()
    return np.column_stack([x, np.tile(values, (len(rows), 1))])


def transfer(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Predict every row of the held-out entities from a model pooled over the others."""
    held = sorted(str(e) for e in prompt.artifact["rows"]["entities"])
    frames = entity_frames(profile)
    x = {name: entity_matrix(rows, profile) for name, rows in frames.items()}
    y = {name: rows[profile.target].to_numpy(dtype=float) for name, rows in frames.items()}
    public = [name for name in frames if name not in held and np.isfinite(y[name]).any()]
    observed = {name: np.isfinite(y[name]) for name in public}
    low = 0.0 if public and min(np.nanmin(y[n]) for n in public) >= 0 else -np.inf

    def fit(train: list[str], new: list[str], learner: str) -> list[np.ndarray]:
        xs = np.concatenate([x[n][observed[n]] for n in train])
        ys = np.concatenate([y[n][observed[n]] for n in train])
        flat = np.clip(fit_predict(learner, xs, ys, np.concatenate([x[n] for n in new])), low, None)
        return np.split(flat, np.cumsum([len(x[n]) for n in new])[:-1])

    parts = [pd.DataFrame({prompt.key: name, time_key(prompt): frames[name][profile.time].to_numpy()})
             for name in held if name in frames]
    checks = {}
    for column, learner in plan.learners.items():
        for part, values in zip(parts, fit(public, [n for n in held if n in frames], learner), strict=True):
            part[column] = values
        groups = [public[g::N_GROUPS] for g in range(N_GROUPS)]
        checks[column] = {}
        for g, group in enumerate(groups):
            rest = [n for k, other in enumerate(groups) if k != g for n in other]
            if not group or not rest:
                continue
            for name, values in zip(group, fit(rest, group, learner), strict=True):
                checks[column][name] = (y[name][observed[name]], values[observed[name]])
    return Handin(pd.concat(parts, ignore_index=True), report(prompt, checks))
