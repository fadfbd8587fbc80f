"""The `forecast` family: predict a withheld later period of the target from the drivers.

The target is regressed on lagged, antecedent and seasonal features of the drivers
(`features.driver_features`; the target is never an input), one model per artifact value column
with the learner its description names, fitted per entity on every observed day before the test
period. A column whose description names no learner gets an ensemble, the mean of: the per-entity
boosted trees; one boosted-tree model pooled over all entities (the target divided by the
entity's training mean, that mean's log a feature), which lends short records the other entities'
data; and a per-entity ridge regression, since trees never predict outside the range of the
training targets and a test period whose level drifted beyond it (a seasonal shift) needs a member
that extrapolates. A target that is never negative in training is never predicted negative.

Reported metrics are estimated the way the harness computes them, on out-of-fold predictions of
the training days: the training period is cut into two contiguous halves and each is predicted by
the same method fitted on the other (a single held-out tail is too short to be representative in a
dry or a wet year). The first year, where the longest running means are still spinning up, is not
scored (unless the record is too short).
"""

from __future__ import annotations

from dataclasses import dataclass

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
ENSEMBLED = {"boosting"}  # the default learner: joined by a pooled member and a linear one


@dataclass(frozen=True)
class Entity:
    """One entity's features, target and masks (training days, owed days, validation folds)."""

    x: np.ndarray
    y: np.ndarray
    train: np.ndarray
    owed: np.ndarray
    blocks: list[np.ndarray]
    low: float  # predictions are clipped here (0 for a never-negative target)

    @property
    def scored(self) -> np.ndarray:
        """Training days whose out-of-fold prediction is scored."""
        settled = self.train & (np.arange(len(self.y)) >= SPIN_UP_DAYS)
        return settled if settled.sum() >= 0.3 * self.train.sum() else self.train


def time_key(prompt: Prompt) -> str:
    """The artifact key column that is not the entity key."""
    return next(k for k in prompt.artifact["key"] if k != prompt.key)


def folds(train: np.ndarray, n_folds: int) -> list[np.ndarray]:
    """`n_folds` contiguous blocks of the training rows in time order, as masks."""
    out = []
    for block in np.array_split(np.flatnonzero(train), n_folds):
        mask = np.zeros(len(train), dtype=bool)
        mask[block] = True
        out.append(mask)
    return [m for m in out if m.any()]


def per_entity(e: Entity, learner: str) -> tuple[np.ndarray, np.ndarray]:
    """(owed predictions, out-of-fold predictions of every day) of one entity's own model."""
    oof = np.full(len(e.y), np.nan)
    if not e.train.any():
        return np.zeros(e.owed.sum()), oof
    owed = fit_predict(learner, e.x[e.train], e.y[e.train], e.x[e.owed])
    for block in e.blocks if len(e.blocks) > 1 else []:
        rest = e.train & ~block
        oof[block] = fit_predict(learner, e.x[rest], e.y[rest], e.x[block])
    return owed, oof


def pooled(entities: list[Entity], learner: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per entity (owed predictions, out-of-fold predictions) of one model pooled over entities."""
    scales = [max(abs(float(np.mean(e.y[e.train]))), 1e-6) if e.train.any() else 1.0 for e in entities]
    x = [np.column_stack([e.x, np.full(len(e.y), np.log(s))]) for e, s in zip(entities, scales, strict=True)]

    def fit(masks: list[np.ndarray], targets: list[np.ndarray]) -> list[np.ndarray]:
        rows = np.concatenate([xi[m] for xi, m in zip(x, masks, strict=True)])
        y = np.concatenate([e.y[m] / s for e, m, s in zip(entities, masks, scales, strict=True)])
        new = np.concatenate([xi[t] for xi, t in zip(x, targets, strict=True)])
        flat = fit_predict(learner, rows, y, new)
        cuts = np.cumsum([t.sum() for t in targets])[:-1]
        return [p * s for p, s in zip(np.split(flat, cuts), scales, strict=True)]

    owed = fit([e.train for e in entities], [e.owed for e in entities])
    oofs = [np.full(len(e.y), np.nan) for e in entities]
    for k in range(N_FOLDS):
        held = [e.blocks[k] if len(e.blocks) == N_FOLDS else np.zeros(len(e.y), bool) for e in entities]
        rest = [e.train & ~h for e, h in zip(entities, held, strict=True)]
        for oof, h, p in zip(oofs, held, fit(rest, held), strict=True):
            oof[h] = p
    return list(zip(owed, oofs, strict=True))


def predict(entities: list[Entity], learner: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per entity (owed, out-of-fold) predictions of a column's learner, clipped to the target's range."""
    members = [[per_entity(e, learner) for e in entities]]
    if learner in ENSEMBLED and len(entities) > 1 and sum(e.train.sum() for e in entities) >= 60:
        members.append(pooled(entities, learner))
    if learner in ENSEMBLED:
        members.append([per_entity(e, "linear") for e in entities])
    out = []
    for i, e in enumerate(entities):
        owed = np.mean([m[i][0] for m in members], axis=0)
        oof = np.mean([m[i][1] for m in members], axis=0)
        out.append((np.clip(owed, e.low, None), np.clip(oof, e.low, None)))
    return out


def forecast(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Predict every owed row of every entity with every value column's learner."""
    rows_spec, key = prompt.artifact["rows"], time_key(prompt)
    first, end = pd.Timestamp(rows_spec["from"]), pd.Timestamp(rows_spec["to"]) + pd.Timedelta(days=1)
    frames = entity_frames(profile)
    entities, parts = [], []
    for name, rows in frames.items():
        times, y = rows[profile.time], rows[profile.target].to_numpy(dtype=float)
        train = ((times < first) & rows[profile.target].notna()).to_numpy()
        owed = ((times >= first) & (times < end)).to_numpy()
        low = 0.0 if train.any() and np.nanmin(y[train]) >= 0 else -np.inf
        x = driver_features(rows, profile.drivers, profile.time).to_numpy()
        entities.append(Entity(x, y, train, owed, folds(train, N_FOLDS), low))
        parts.append(pd.DataFrame({prompt.key: name, key: times[owed].to_numpy()}))
    checks = {}
    for column, learner in plan.learners.items():
        checks[column] = {}
        for name, part, e, (owed, oof) in zip(frames, parts, entities, predict(entities, learner), strict=True):
            part[column] = owed
            scored = e.scored & ~np.isnan(oof)
            checks[column][name] = (e.y[scored], oof[scored])
    return Handin(pd.concat(parts, ignore_index=True), report(prompt, checks))


def report(prompt: Prompt, checks: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]) -> dict:
    """The answer document: each metric estimated on its column's validation pairs."""
    columns = list(checks)
    return metrics_answer({m["name"]: estimate(m, checks[column_of(m, columns)])
                           for m in prompt.answer.get("metrics", [])})
