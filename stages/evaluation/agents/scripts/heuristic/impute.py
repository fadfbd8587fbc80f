"""The `impute` family: fill the null days of the target by regression on pseudo-gaps.

1. A non-negative target is modelled in log space, log(x + eps), eps = 1 % of the entity's mean
   (at least 0.01): errors of a skewed quantity become comparable across its range.
2. Per missing day, the signals a hydrologist or a flux-tower analyst would look at: the straight
   line between the known days around the gap (the baseline); the entity's own driver model
   (boosted trees on lagged and seasonal driver features, fitted without the days it must fill),
   corrected by its errors at the gap's edges;
   the weighted mean anomaly of the best-correlated other entities on that day against their own
   straight line between the same edges (neighbours see the same storms); how the drivers moved
   since the gap began; where the day sits in the gap; the season.
3. A gradient-boosted tree ensemble pooled over entities learns the departure from the baseline
   on pseudo-gaps: runs of known days hidden as the prompt says the evaluation hid them (run
   lengths read from it), two draws of 20 % of the known days; a third draw of 10 % is held out to
   estimate the reported metrics.
4. Every null day of the scope is filled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from heuristic.features import driver_features, seasonal_features
from heuristic.gaps import donor_anomaly, donor_weights, edges, interpolate, pseudo_gaps, since_edge
from heuristic.handin import Handin, metrics_answer
from heuristic.learners import boosting, fit_predict
from heuristic.metrics import estimate
from heuristic.profile import Profile, entity_frames, wide
from heuristic.prompt import Plan, Prompt

DRAWS = (0.2, 0.2)
CHECK_SHARE = 0.1
TOP_DONORS = 5
CAP_DAYS = 90
DRIVER_MODEL = "quick_boosting"


class Series:
    """The target of every entity on a common day axis, with its transform and shared signals."""

    def __init__(self, profile: Profile):
        """Pivot the target, choose the transform and the donors, build driver features."""
        flow = wide(profile, profile.target)
        self.days, self.entities = flow.index, [str(e) for e in flow.columns]
        raw = flow.to_numpy(dtype=float)
        self.known = ~np.isnan(raw)
        self.log = bool(np.nanmin(raw) >= 0) if self.known.any() else False
        means = np.nan_to_num(np.nanmean(np.where(self.known, raw, np.nan), axis=0))
        self.eps = np.maximum(0.01, 0.01 * means) if self.log else np.zeros(raw.shape[1])
        self.values = self.forward(np.where(self.known, raw, 0.0), np.arange(raw.shape[1]))
        self.weights = donor_weights(self.values, self.known, TOP_DONORS)
        frames = entity_frames(profile)
        self.driver_names, self.drivers = list(profile.drivers), {}
        for entity in self.entities:
            rows = frames[entity].set_index(profile.time).reindex(self.days)
            rows = rows.rename_axis(profile.time).reset_index()
            self.drivers[entity] = driver_features(rows, profile.drivers, profile.time)
        self.season = pd.DataFrame(seasonal_features(pd.Series(self.days)))

    def forward(self, raw: np.ndarray, entity: np.ndarray | int) -> np.ndarray:
        """Values in model space."""
        return np.log(raw + self.eps[entity]) if self.log else raw

    def back(self, values: np.ndarray, entity: np.ndarray | int) -> np.ndarray:
        """Model space back to the target's units (never negative for a log-modelled target)."""
        return np.clip(np.exp(values) - self.eps[entity], 0.0, None) if self.log else values

    def simulate(self, b: int, known: np.ndarray) -> np.ndarray:
        """The entity's driver model fitted on its known days, predicting every day."""
        drivers = self.drivers[self.entities[b]].to_numpy()
        return fit_predict(DRIVER_MODEL, drivers[known], self.values[known, b], drivers)

    def day_features(self, b: int, known: np.ndarray, simulation: np.ndarray) -> pd.DataFrame:
        """Features of every day of entity `b`, given which of its days count as known."""
        own = self.values[:, b]
        before, after = edges(known)
        baseline = interpolate(np.where(known, own, 0.0), before, after)
        drivers = self.drivers[self.entities[b]]
        corrected = simulation + interpolate(np.where(known, own - simulation, 0.0), before, after)
        days = np.arange(len(known))
        at_before = np.clip(before, 0, len(known) - 1)
        columns = {
            "baseline": baseline, "model_line": corrected - baseline, "model_raw": simulation - baseline,
            "to_before": np.minimum(days - before, CAP_DAYS), "to_after": np.minimum(after - days, CAP_DAYS),
            "gap_days": np.minimum(after - before, 2 * CAP_DAYS),
            "donors": donor_anomaly(self.values, self.known, self.weights[b], before, after),
        }
        for name in [c for c in drivers.columns if c.endswith("_ewm7")]:
            series = drivers[name].to_numpy()
            columns[f"{name}_since"] = series - series[at_before]
        for name in self.driver_names:
            columns[f"{name}_sum_since"] = since_edge(drivers[name].to_numpy(), before)
        frame = pd.DataFrame(columns)
        return pd.concat([frame, self.season], axis=1)


def impute(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Fill every null day of the target (see the module docstring)."""
    series, rng = Series(profile), np.random.default_rng(0)
    train, check, fill = [], [], []
    for b in range(len(series.entities)):
        known = series.known[:, b]
        draws = [(pseudo_gaps(known, share, plan.run_days, rng), bucket)
                 for share, bucket in [*((s, train) for s in DRAWS), (CHECK_SHARE, check)]]
        # One driver model for all draws, blind to every pseudo-gap: it is a little weaker than
        # the one that fills the real gaps, never better informed.
        simulation = series.simulate(b, known & ~np.logical_or.reduce([h for h, _ in draws]))
        for hidden, bucket in draws:
            part = series.day_features(b, known & ~hidden, simulation)
            part["target"], part["entity"] = series.values[:, b], b
            bucket.append(part[hidden])
        part = series.day_features(b, known, series.simulate(b, known))
        part["entity"], part["day"] = b, np.arange(len(known))
        fill.append(part[~known])
    train, check, fill = (pd.concat(p, ignore_index=True) for p in (train, check, fill))
    columns = [c for c in train.columns if c not in ("target", "entity", "day")]
    model = boosting().fit(train[columns], train["target"] - train["baseline"])
    pairs = {}
    for b, rows in check.groupby("entity").indices.items():
        part = check.iloc[rows]
        sim = series.back(part["baseline"].to_numpy() + model.predict(part[columns]), b)
        pairs[series.entities[b]] = (series.back(part["target"].to_numpy(), b), sim)
    filled = fill["baseline"].to_numpy() + model.predict(fill[columns]) if len(fill) else np.array([])
    entity = fill["entity"].to_numpy()
    values = series.back(filled, entity) if len(fill) else filled
    key = next(k for k in prompt.artifact["key"] if k != prompt.key)
    frame = pd.DataFrame({prompt.key: [series.entities[e] for e in entity],
                          key: series.days[fill["day"].to_numpy()]})
    for column in prompt.artifact["columns"]:
        frame[column] = values
    metrics = {m["name"]: estimate(m, pairs) for m in prompt.answer.get("metrics", [])}
    return Handin(frame, metrics_answer(metrics))
