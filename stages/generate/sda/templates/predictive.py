"""Predictive templates: fit on the first samples by sample_id, predict or score on the held-out rest.

The confusion perturbations are the usual modelling slips: scoring on the training rows, fitting on
every row (the held-out ones included), leaving out the intercept, skipping standardization,
scoring on the log scale; the diffusion ones swap a feature, a target or the new sample's values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from stages.generate.sda.templates.base import Binding, Context, Template, per_dataset, pick, quantile, swapped

TRAIN_SHARE = 0.7
TOLERANCE = 0.03  # relative, for the new error and R^2 answers
MIN_R2 = 0.05  # a model explaining less than this on the held-out samples makes no question


def _split(context: Context) -> int:
    return int(len(context.table) * TRAIN_SHARE)


@per_dataset
def _parts(context: Context, all_rows: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The training rows (every row when `all_rows`, a slip) and the held-out rows, by sample_id."""
    table = context.table.sort_values("sample_id", kind="stable")
    return (table if all_rows else table.iloc[:_split(context)]), table.iloc[_split(context):]


@per_dataset
def _held_out(context: Context) -> Binding:
    table = context.table.sort_values("sample_id", kind="stable")
    return {"n_train": _split(context), "first_test": str(table["sample_id"].iloc[_split(context)])}


def _ols_predict(train: pd.DataFrame, rows: pd.DataFrame, features: list[str], target: str, intercept: bool = True,
                 degree: int = 1, log: bool = False) -> np.ndarray:
    """Least-squares predictions for `rows` of `target` (of its log when `log`) from powers of the features."""
    def design(frame: pd.DataFrame) -> np.ndarray:
        powers = [frame[name].to_numpy(dtype=float) ** p for name in features for p in range(1, degree + 1)]
        return np.column_stack([np.ones(len(frame))] * intercept + powers)

    observed = train[target].to_numpy(dtype=float)
    coefficients = np.linalg.lstsq(design(train), np.log(observed) if log else observed, rcond=None)[0]
    return design(rows) @ coefficients


def _rmse(observed: pd.Series | np.ndarray, predicted: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(observed, dtype=float) - predicted) ** 2)))


def _r2(observed: pd.Series | np.ndarray, predicted: np.ndarray) -> float:
    observed = np.asarray(observed, dtype=float)
    return float(1 - np.sum((observed - predicted) ** 2) / np.sum((observed - observed.mean()) ** 2))


def _scored(context: Context, binding: Binding) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fitting rows and the rows scored (the training ones when the slip is scoring on them)."""
    train, test = _parts(context, bool(binding.get("all_rows")))
    return train, (train if binding.get("train_error") else test)


def _bind_features(context: Context, rng: np.random.Generator) -> Binding:
    target = pick(rng, context.measured(("target",)))[0]
    features = sorted(pick(rng, [n for n in context.measured() if n != target], 2))
    return {"target": target, "f1": features[0], "f2": features[1]} | _held_out(context)


def _other_feature(context: Context, binding: Binding, slot: str) -> list[Binding]:
    """The binding with one feature swapped for each of (up to) two other measured variables."""
    taken = (binding["target"], binding["f1"], binding["f2"])
    return [binding | {slot: other} for other in context.measured() if other not in taken][:2]


def _two_feature_predictions(context: Context, binding: Binding) -> tuple[pd.DataFrame, np.ndarray]:
    train, test = _parts(context)
    return test, _ols_predict(train, test, [binding["f1"], binding["f2"]], binding["target"],
                              intercept=not binding.get("no_intercept"))


def _test_rmse(context: Context, binding: Binding) -> float:
    test, predicted = _two_feature_predictions(context, binding)
    return _rmse(test[binding["target"]], predicted)


def _test_mean_prediction(context: Context, binding: Binding) -> float:
    return float(np.mean(_two_feature_predictions(context, binding)[1]))


def _bind_x(context: Context, rng: np.random.Generator, positive: bool = False,
            keep: Callable[[Binding], bool] = lambda binding: True) -> Binding | None:
    """A computed target and one of its ancestors (a positive target when `positive`, a pair `keep` accepts)."""
    computed = [name for name in context.measured(("internal", "target"))
                if not positive or (context.table[name] > 0).all()]
    held_out = _held_out(context)
    usable = [binding for y in computed for x in sorted(context.scenario.ancestors(y))
              if keep(binding := {"target": y, "x": x} | held_out)]
    return usable[rng.integers(len(usable))] if usable else None


def _other_x(context: Context, binding: Binding) -> list[Binding]:
    ancestors = sorted(context.scenario.ancestors(binding["target"]) - {binding["x"]})
    return [binding | {"x": other} for other in ancestors][:2]


@per_dataset
def _poly_mae(context: Context, binding: Binding) -> float:
    train, rows = _scored(context, binding)
    predicted = _ols_predict(train, rows, [binding["x"]], binding["target"], degree=int(binding.get("degree", 2)))
    return float(np.mean(np.abs(rows[binding["target"]].to_numpy(dtype=float) - predicted)))


def _bind_poly(context: Context, rng: np.random.Generator) -> Binding | None:
    """A pair where the quadratic term matters: a straight line scores outside the tolerance."""
    def curved(binding: Binding) -> bool:
        quadratic, straight = _poly_mae(context, binding), _poly_mae(context, binding | {"degree": 1})
        return abs(straight - quadratic) > 2 * TOLERANCE * quadratic

    return _bind_x(context, rng, keep=curved)


@per_dataset
def _log_linear_r2(context: Context, binding: Binding) -> float:
    train, rows = _scored(context, binding)
    predicted = _ols_predict(train, rows, [binding["x"]], binding["target"], log=True)
    observed = rows[binding["target"]].to_numpy(dtype=float)
    return _r2(np.log(observed), predicted) if binding.get("log_scale") else _r2(observed, np.exp(predicted))


def _bind_log_linear(context: Context, rng: np.random.Generator) -> Binding | None:
    return _bind_x(context, rng, positive=True, keep=lambda binding: _log_linear_r2(context, binding) >= MIN_R2)


def _knn_rmse(context: Context, binding: Binding) -> float:
    train, rows = _scored(context, binding)
    features = [binding["f1"], binding["f2"]]
    known, asked = train[features].to_numpy(dtype=float), rows[features].to_numpy(dtype=float)
    if not binding.get("raw"):
        mean, sd = known.mean(axis=0), known.std(axis=0)
        known, asked = (known - mean) / sd, (asked - mean) / sd
    distances = ((asked[:, None, :] - known[None, :, :]) ** 2).sum(axis=2)
    nearest = np.argsort(distances, axis=1, kind="stable")[:, :int(binding["k"])]
    return _rmse(rows[binding["target"]], train[binding["target"]].to_numpy(dtype=float)[nearest].mean(axis=1))


def _bind_knn(context: Context, rng: np.random.Generator) -> Binding:
    return _bind_features(context, rng) | {"k": int(rng.choice([5, 10]))}


@per_dataset
def _group_mean_r2(context: Context, binding: Binding) -> float:
    train, test = _parts(context, bool(binding.get("all_rows")))
    if binding.get("pooled"):
        predicted = np.full(len(test), train[binding["target"]].mean())
    else:
        means = train.groupby(context.scenario.group, observed=True)[binding["target"]].mean()
        predicted = test[context.scenario.group].map(means).to_numpy(dtype=float)
    return _r2(test[binding["target"]], predicted)


def _bind_group_mean(context: Context, rng: np.random.Generator) -> Binding | None:
    """A computed variable the group explains at least a little of on the held-out samples."""
    held_out = _held_out(context)
    usable = [name for name in context.measured(("internal", "target"))
              if _group_mean_r2(context, {"target": name} | held_out) >= MIN_R2]
    return {"target": pick(rng, usable)[0]} | held_out if usable else None


def _bind_new_sample(context: Context, rng: np.random.Generator) -> Binding:
    binding = _bind_features(context, rng)
    for value, name in (("v1", "f1"), ("v2", "f2")):
        binding[value] = float(f"{quantile(context, binding[name], rng.uniform(0.1, 0.9)):.3g}")
    return binding


def _new_sample(context: Context, binding: Binding) -> float:
    train, _ = _parts(context, bool(binding.get("all_rows")))
    new = pd.DataFrame({binding["f1"]: [binding["v1"]], binding["f2"]: [binding["v2"]]})
    predicted = _ols_predict(train, new, [binding["f1"], binding["f2"]], binding["target"],
                             intercept=not binding.get("no_intercept"))
    return float(predicted[0])


@per_dataset
def _set_errors(context: Context, binding: Binding) -> dict[str, float]:
    train, rows = _scored(context, binding)
    return {features: _rmse(rows[binding["target"]], _ols_predict(train, rows, features.split("+"), binding["target"],
                                                                  intercept=not binding.get("no_intercept")))
            for features in binding["candidates"].split(", ")}


def _best_set(context: Context, binding: Binding) -> str:
    errors = _set_errors(context, binding)
    return sorted(errors, key=lambda features: (errors[features], features))[0]


def _bind_feature_sets(context: Context, rng: np.random.Generator) -> Binding | None:
    """3 or 4 two-feature sets, each holding another ancestor of the target; the best clearly best."""
    target = pick(rng, context.measured(("internal", "target")))[0]
    ancestors = sorted(context.scenario.ancestors(target))
    others = [name for name in context.numeric_columns() if name != target and name not in ancestors]
    if len(ancestors) < 3 or len(others) < 2:
        return None
    anchors = pick(rng, ancestors, min(4, len(ancestors)))
    partners = [*pick(rng, others, min(len(others), len(anchors)))] * 2
    sets = sorted("+".join(sorted(pair)) for pair in zip(anchors, partners, strict=False))
    binding = {"target": target, "candidates": ", ".join(sets)} | _held_out(context)
    first, second = sorted(_set_errors(context, binding).values())[:2]
    return binding if second > 1.03 * first else None


def _other_set_targets(context: Context, binding: Binding) -> list[Binding]:
    used = set("+".join(binding["candidates"].split(", ")).split("+"))
    return [binding | {"target": other} for other in context.measured(("internal", "target"))
            if other != binding["target"] and other not in used][:2]


TEMPLATES = [
    Template("predictive.holdout_rmse", "predictive",
             "Fit an ordinary least-squares model (with intercept) of {target} on {f1} and {f2} using the first"
             " {n_train} samples by sample_id. What is its root-mean-square error on the samples from {first_test}"
             " on?",
             "number", _bind_features, _test_rmse,
             lambda c, b: _other_feature(c, b, "f2"),
             lambda c, b: [b | {"no_intercept": 1.0}], tolerance=0.03),
    Template("predictive.holdout_mean", "predictive",
             "Fit an ordinary least-squares model (with intercept) of {target} on {f1} and {f2} using the first"
             " {n_train} samples by sample_id. What is the mean of its predictions for the samples from"
             " {first_test} on?",
             "number", _bind_features, _test_mean_prediction,
             lambda c, b: _other_feature(c, b, "f1"),
             lambda c, b: [b | {"no_intercept": 1.0}], tolerance=0.01),
    Template("predictive.poly2_mae", "predictive",
             "Fit a degree-2 polynomial {target} = b0 + b1 {x} + b2 {x}^2 by ordinary least squares to the first"
             " {n_train} samples by sample_id. What is its mean absolute error (in {target_unit}) on the samples"
             " from {first_test} on?",
             "number", _bind_poly, _poly_mae, _other_x,
             lambda c, b: [b | {"degree": 1}, b | {"train_error": 1.0}], tolerance=TOLERANCE),
    Template("predictive.log_linear_r2", "predictive",
             "Fit ln({target}) = b0 + b1 {x} by ordinary least squares to the first {n_train} samples by sample_id,"
             " and predict {target} as exp(b0 + b1 {x}). What is the R^2 of these predictions on the samples from"
             " {first_test} on, on the original scale of {target} (1 minus the residual sum of squares over the"
             " sum of squares around those samples' mean)?",
             "number", _bind_log_linear, _log_linear_r2, _other_x,
             lambda c, b: [b | {"log_scale": 1.0}, b | {"train_error": 1.0}], tolerance=TOLERANCE),
    Template("predictive.knn_rmse", "predictive",
             "Standardize {f1} and {f2} with the mean and population standard deviation of the first {n_train}"
             " samples by sample_id. Predict {target} for each sample from {first_test} on as the mean {target} of"
             " its {k} nearest of those first samples (Euclidean distance on the standardized values). What is the"
             " root-mean-square error of these predictions (in {target_unit})?",
             "number", _bind_knn, _knn_rmse,
             lambda c, b: _other_feature(c, b, "f2"),
             lambda c, b: [b | {"raw": 1.0}, b | {"train_error": 1.0}], tolerance=TOLERANCE),
    Template("predictive.group_mean_r2", "predictive",
             "Predict {target} for each sample from {first_test} on by the mean {target} of the first {n_train}"
             " samples (by sample_id) of the same {group}. What is the R^2 of these predictions on those samples"
             " (1 minus the residual sum of squares over the sum of squares around their own mean)?",
             "number", _bind_group_mean, _group_mean_r2,
             lambda c, b: [b | {"target": other} for other in c.measured(("internal", "target"))
                           if other != b["target"]][:2],
             lambda c, b: [b | {"pooled": 1.0}, b | {"all_rows": 1.0}], tolerance=TOLERANCE),
    Template("predictive.new_sample", "predictive",
             "Fit an ordinary least-squares model (with intercept) of {target} on {f1} and {f2} using the first"
             " {n_train} samples by sample_id. What does it predict for a new sample with {f1} = {v1} {f1_unit} and"
             " {f2} = {v2} {f2_unit} (in {target_unit})?",
             "number", _bind_new_sample, _new_sample, lambda c, b: [swapped(b, "v1", "v2")],
             lambda c, b: [b | {"no_intercept": 1.0}, b | {"all_rows": 1.0}], tolerance=0.02),
    Template("predictive.best_feature_set", "predictive",
             "Fit an ordinary least-squares model (with intercept) of {target} on each of the feature sets"
             " {candidates} (features joined by +) using the first {n_train} samples by sample_id. Which set gives"
             " the lowest root-mean-square error on the samples from {first_test} on? Answer with the set as"
             " written.",
             "entity", _bind_feature_sets, _best_set, _other_set_targets,
             lambda c, b: [b | {"no_intercept": 1.0}, b | {"train_error": 1.0}]),
]
