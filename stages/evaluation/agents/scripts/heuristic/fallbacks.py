"""Simple methods a family falls back to when its standard method fails on a workspace.

Each needs little of the data: the entity's mean of the target over the owed period
(`forecast`), linear interpolation in time (`impute`), a split at the median of the target's mean
(`partition`), the uninformed prior (`statistic`). None reports a metric it did not estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from heuristic.handin import Handin
from heuristic.profile import Profile, owed_mask
from heuristic.prompt import Plan, Prompt
from heuristic.statistic import prior


def _time_key(prompt: Prompt) -> str:
    return next(k for k in prompt.artifact["key"] if k != prompt.key)


def mean_forecast(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Every owed row gets its entity's mean of the known target.

    An entity with no known value gets the overall mean (0 when no entity has any).
    """
    series, key, time = profile.series, prompt.key, profile.time
    owed = series[owed_mask(profile, prompt.artifact["rows"])]
    means = series.groupby(key)[profile.target].mean()
    overall = series[profile.target].mean()
    values = owed[key].map(means).fillna(0.0 if np.isnan(overall) else overall).to_numpy()
    frame = pd.DataFrame({key: owed[key].to_numpy(), _time_key(prompt): owed[time].to_numpy()})
    for column in prompt.artifact["columns"]:
        frame[column] = values
    return Handin(frame, {"metrics": {}})


def interpolate_fill(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Null days get the straight line between the known days around them (ends held)."""
    series, key, target = profile.series, prompt.key, profile.target
    filled = series.groupby(key)[target].transform(lambda s: s.interpolate(limit_direction="both"))
    owed = series[target].isna()
    frame = pd.DataFrame({key: series.loc[owed, key].to_numpy(),
                          _time_key(prompt): series.loc[owed, profile.time].to_numpy()})
    for column in prompt.artifact["columns"]:
        frame[column] = filled[owed].fillna(0.0).to_numpy()
    return Handin(frame, {"metrics": {}})


def median_split(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Two groups: entities whose mean target is above the median of the means, and the rest."""
    owed = [str(e) for e in prompt.scope["entities"]]
    if profile.series is not None and profile.target is not None:
        means = profile.series.groupby(profile.key)[profile.target].mean().reindex(owed)
        labels = (means > means.median()).astype(int).to_numpy()
    else:
        labels = np.arange(len(owed)) % 2
    frame = pd.DataFrame({prompt.key: owed})
    for column in prompt.artifact["columns"]:
        frame[column] = labels
    return Handin(frame, {"metrics": {}})


def prior_answer(profile: Profile | None, prompt: Prompt, plan: Plan) -> Handin:
    """The uninformed prior of the answer format, or no metrics."""
    if prompt.answer.get("kind") == "hypothesis":
        return Handin(None, {"answer": prior(prompt.answer)})
    return Handin(None, {"metrics": {}})
