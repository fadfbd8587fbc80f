"""Metrics the harness recomputes from an agent's artifact and the hidden truth.

Every pairwise metric has one shape (neuralhydrology `evaluation/metrics.py`): validate that `obs`
(truth) and `sim` (the agent's values) are 1-D arrays of one length, drop the pairs where either is
NaN, compute, return a Python `float`. A metric never returns NaN: too few valid pairs (fewer than
2) or a zero the formula divides by raises `MetricUndefined` with the reason.

Decisions the formulas leave open:
- A NaN `sim` drops its pair too (ignored, not punished): the artifact reader
  (`stages.scoring.query.artifacts`) already refuses missing values, so NaN here is a gap in the truth.
- Infinite values are a `ValueError`, not dropped. "Constant" means all values equal, tested
  exactly: mean([0.1] * 3) != 0.1, and dividing by that rounding residue would return garbage.
- A constant `sim` has Pearson r = 0 ("no linear skill"), in KGE and `r2`; r is clipped to [-1, 1]
  so rounding never puts `r2` outside its valid range.

How the grader applies a metric to an artifact (overflow guard, per entity, aggregate): `entities`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.spatial.distance import cdist


class MetricUndefined(ValueError):
    """The metric has no value on these data (too few pairs, a zero divisor); the message says why."""


@dataclass(frozen=True)
class KgeComponents:
    """The three terms of the Kling-Gupta efficiency: correlation, variability ratio, bias ratio."""

    r: float
    alpha: float
    beta: float


def _valid_pairs(obs: Any, sim: Any) -> tuple[np.ndarray, np.ndarray]:
    obs, sim = np.asarray(obs, dtype=float), np.asarray(sim, dtype=float)
    if obs.ndim != 1 or sim.ndim != 1:
        raise ValueError(f"obs and sim must be 1-D arrays, got shapes {obs.shape} and {sim.shape}")
    if len(obs) != len(sim):
        raise ValueError(f"obs and sim must have the same length, got lengths {len(obs)} and {len(sim)}")
    keep = ~(np.isnan(obs) | np.isnan(sim))
    obs, sim = obs[keep], sim[keep]
    if np.isinf(obs).any() or np.isinf(sim).any():
        raise ValueError("obs and sim must not hold infinite values")
    if len(obs) < 2:
        raise MetricUndefined(f"{len(obs)} valid (non-NaN) pair(s); at least 2 are needed")
    return obs, sim


def _constant(values: np.ndarray) -> bool:
    return bool((values == values[0]).all())


def _deviations(values: np.ndarray, mean: np.float64 | None = None) -> tuple[np.ndarray, np.float64]:
    """`values` minus their mean (`mean`), and the sum of their squares (n x the population variance)."""
    deviations = values - (values.mean() if mean is None else mean)
    return deviations, (deviations**2).sum()


def _pearson(obs: np.ndarray, sim: np.ndarray, spreads: tuple | None = None) -> float:
    """Pearson r of non-constant `obs`; 0 for a constant `sim` (`spreads`: their `_deviations`)."""
    if _constant(sim):
        return 0.0
    (d_obs, squares_obs), (d_sim, squares_sim) = spreads or (_deviations(obs), _deviations(sim))
    # One sqrt of the product (not a product of sqrts) keeps r(x, x) exactly 1.
    r = (d_obs * d_sim).sum() / np.sqrt(squares_obs * squares_sim)
    return float(min(max(r, -1.0), 1.0))


def nse(obs: Any, sim: Any) -> float:
    """Nash-Sutcliffe efficiency: NSE = 1 - Σ(sim - obs)² / Σ(obs - mean(obs))².

    Nash, J. E. & Sutcliffe, J. V. (1970), J. Hydrol. 10(3), 282-290. 1 is perfect, 0 is the skill
    of predicting mean(obs) everywhere. Raises `MetricUndefined` when obs is constant.
    """
    obs, sim = _valid_pairs(obs, sim)
    if _constant(obs):
        raise MetricUndefined("obs is constant: NSE divides by its variance")
    return 1.0 - float(np.sum((sim - obs) ** 2)) / float(np.sum((obs - obs.mean()) ** 2))


def kge_components(obs: Any, sim: Any) -> KgeComponents:
    """The terms of KGE: r = Pearson(obs, sim), alpha = std(sim)/std(obs), beta = mean(sim)/mean(obs).

    Gupta, H. V., Kling, H., Yilmaz, K. K. & Martinez, G. F. (2009), J. Hydrol. 377, 80-91.
    Population standard deviations (ddof=0; alpha does not depend on it, both have n values). A
    constant sim has r = 0, alpha = 0 and its value as mean (not a rounded average of copies).
    Raises `MetricUndefined` when obs is constant (alpha and r divide by std(obs)) or mean(obs) is
    0 (beta divides by it).
    """
    obs, sim = _valid_pairs(obs, sim)
    if _constant(obs):
        raise MetricUndefined("obs is constant: KGE's alpha and r divide by std(obs)")
    mean_obs = obs.mean()
    if mean_obs == 0:
        raise MetricUndefined("mean(obs) is 0: KGE's beta divides by it")
    if _constant(sim):
        return KgeComponents(r=0.0, alpha=0.0, beta=float(sim[0] / mean_obs))
    mean_sim = sim.mean()
    spreads = _deviations(obs, mean_obs), _deviations(sim, mean_sim)
    alpha = np.sqrt(spreads[1][1] / len(sim)) / np.sqrt(spreads[0][1] / len(obs))  # std(sim) / std(obs)
    return KgeComponents(r=_pearson(obs, sim, spreads), alpha=float(alpha), beta=float(mean_sim / mean_obs))


def kge(obs: Any, sim: Any) -> float:
    """Kling-Gupta efficiency: KGE = 1 - sqrt((r - 1)² + (alpha - 1)² + (beta - 1)²).

    Gupta et al. (2009), J. Hydrol. 377, 80-91; terms as in `kge_components`. 1 is perfect;
    predicting mean(obs) everywhere scores 1 - sqrt(2) (r = 0, alpha = 0, beta = 1).
    """
    c = kge_components(obs, sim)
    return 1.0 - float(np.sqrt((c.r - 1) ** 2 + (c.alpha - 1) ** 2 + (c.beta - 1) ** 2))


def rmse(obs: Any, sim: Any) -> float:
    """Root-mean-square error: RMSE = sqrt(mean((sim - obs)²)), in the unit of obs."""
    obs, sim = _valid_pairs(obs, sim)
    return float(np.sqrt(np.mean((sim - obs) ** 2)))


def mae(obs: Any, sim: Any) -> float:
    """Mean absolute error: MAE = mean(|sim - obs|), in the unit of obs."""
    obs, sim = _valid_pairs(obs, sim)
    return float(np.mean(np.abs(sim - obs)))


def bias(obs: Any, sim: Any) -> float:
    """Mean error: bias = mean(sim - obs); positive when sim overestimates, best at 0."""
    obs, sim = _valid_pairs(obs, sim)
    return float(np.mean(sim - obs))


def r2(obs: Any, sim: Any) -> float:
    """Squared Pearson correlation: r² = (Σ dobs·dsim)² / (Σ dobs² · Σ dsim²), d = value - mean.

    Not NSE (the "coefficient of determination" of a regression): r² ignores bias and scale, so
    sim = 2·obs + 5 scores 1. A constant sim scores 0; a constant obs raises `MetricUndefined`.
    """
    obs, sim = _valid_pairs(obs, sim)
    if _constant(obs):
        raise MetricUndefined("obs is constant: Pearson r divides by std(obs)")
    return _pearson(obs, sim) ** 2


def _label_codes(labels: Any, name: str) -> np.ndarray:
    """Integer codes 0..k-1 of 1-D labels (any hashable values); -1 marks a missing label."""
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    return pd.factorize(array)[0]


def silhouette(features: Any, labels: Any) -> float:
    """Mean silhouette coefficient with Euclidean distance.

    s(i) = (b(i) - a(i)) / max(a(i), b(i)), a(i) = mean distance from row i to the other rows of
    its cluster, b(i) = smallest mean distance from row i to the rows of another cluster
    (Rousseeuw, P. J. (1987), J. Comput. Appl. Math. 20, 53-65). As scikit-learn's
    `silhouette_score`: s = 0 for a singleton cluster and where a = b = 0.

    Rows are never dropped: the feature space is the benchmark's, so NaN there is the benchmark's
    fault (`ValueError`), and a missing label is a `ValueError` too, because leaving the hard rows
    unlabelled would raise the score. Fewer than 2 or more than n - 1 distinct labels raise
    `MetricUndefined`.
    """
    x = np.asarray(features, dtype=float)
    codes = _label_codes(labels, "labels")
    if x.ndim != 2 or len(x) != len(codes):
        raise ValueError(f"features must be 2-D with one row per label, got shape {x.shape} and {len(codes)} labels")
    if not np.isfinite(x).all():
        raise ValueError("features hold NaN or infinite values (the benchmark's feature space must be complete)")
    if (codes < 0).any():
        raise ValueError(f"{int((codes < 0).sum())} row(s) have no label")
    n, k = len(x), int(codes.max(initial=-1)) + 1
    if not 2 <= k <= n - 1:
        raise MetricUndefined(f"{k} distinct labels for {n} rows; silhouette needs 2 to n - 1")
    sizes = np.bincount(codes)
    # Summed distance from every row to each cluster: memory n x (largest cluster), not n x n.
    sums = np.column_stack([cdist(x, x[codes == c]).sum(axis=1) for c in range(k)])
    rows, own = np.arange(n), sizes[codes]
    a = sums[rows, codes] / np.maximum(own - 1, 1)
    to_others = sums / sizes
    to_others[rows, codes] = np.inf
    b = to_others.min(axis=1)
    scale = np.maximum(a, b)
    s = np.where((own > 1) & (scale > 0), (b - a) / np.where(scale > 0, scale, 1.0), 0.0)
    return float(s.mean())


def adjusted_rand(labels_a: Any, labels_b: Any) -> float:
    """Adjusted Rand index: ARI = (index - expected) / (max - expected), over pairs of items.

    index = Σ_ij C(n_ij, 2) over the contingency table, A = Σ_i C(a_i, 2), B = Σ_j C(b_j, 2),
    expected = A·B / C(n, 2), max = (A + B) / 2 (Hubert, L. & Arabie, P. (1985), J. Classification 2,
    193-218). Computed in exact integers. Pairs where either label is missing are dropped. When both
    labelings are one cluster, or both all singletons, the formula is 0/0: `MetricUndefined`
    (scikit-learn returns 1.0 there).
    """
    codes_a, codes_b = _label_codes(labels_a, "labels_a"), _label_codes(labels_b, "labels_b")
    if len(codes_a) != len(codes_b):
        raise ValueError(f"labels must have the same length, got lengths {len(codes_a)} and {len(codes_b)}")
    keep = (codes_a >= 0) & (codes_b >= 0)
    codes_a, codes_b = codes_a[keep], codes_b[keep]
    n = len(codes_a)
    if n < 2:
        raise MetricUndefined(f"{n} labelled pair(s); at least 2 are needed")

    def pairs(counts: np.ndarray) -> int:
        return sum(int(c) * (int(c) - 1) // 2 for c in counts)

    index = pairs(np.unique(np.column_stack([codes_a, codes_b]), axis=0, return_counts=True)[1])
    a, b, total = pairs(np.bincount(codes_a)), pairs(np.bincount(codes_b)), n * (n - 1) // 2
    denominator = (a + b) * total - 2 * a * b  # 2·total·(max - expected)
    if denominator == 0:
        raise MetricUndefined("both labelings are trivial (one cluster, or all singletons): ARI is 0/0")
    return 2 * (index * total - a * b) / denominator


def variability_error(obs: Any, sim: Any) -> float:
    """|alpha - 1|, alpha = std(sim) / std(obs): KGE's variability term as an error (best 0)."""
    return abs(kge_components(obs, sim).alpha - 1.0)


def bias_ratio_error(obs: Any, sim: Any) -> float:
    """|beta - 1|, beta = mean(sim) / mean(obs): KGE's bias term as an error (best 0)."""
    return abs(kge_components(obs, sim).beta - 1.0)


def relative_bias(obs: Any, sim: Any) -> float:
    """|sum(sim - obs)| / sum(obs): the volume error as a share of the observed volume (best 0)."""
    obs, sim = _valid_pairs(obs, sim)
    total = obs.sum()
    if total == 0:
        raise MetricUndefined("observed values sum to 0")
    return float(abs((sim - obs).sum()) / abs(total))


METRICS: dict[str, Callable[[Any, Any], float]] = {
    "nse": nse, "kge": kge, "rmse": rmse, "mae": mae, "bias": bias, "r2": r2, "adjusted_rand": adjusted_rand,
    "variability_error": variability_error, "bias_ratio_error": bias_ratio_error,
    "relative_bias": relative_bias,
}  # fmt: skip
# Which way is better: "zero" means closest to 0, i.e. compare abs(value).
DIRECTION: dict[str, Literal["higher", "lower", "zero"]] = {
    "nse": "higher", "kge": "higher", "rmse": "lower", "mae": "lower", "bias": "zero", "r2": "higher",
    "adjusted_rand": "higher", "silhouette": "higher", "variability_error": "lower",
    "bias_ratio_error": "lower", "relative_bias": "lower",
}  # fmt: skip
LOWER_IS_BETTER = {name for name, direction in DIRECTION.items() if direction == "lower"}
