"""Exploratory templates: search over the table's columns, levels or thresholds for the strongest pattern.

Entity answers are unique by a margin (a binding whose best and runner-up nearly tie offers none),
so a careful agent cannot land on the runner-up by a legitimate difference in method; numeric
answers are the value of the best pattern. Lists of columns a question searches over are the
`candidates` binding when they are also the answer's choices, `columns` when the answer is a number.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy import stats

from stages.generate.sda.templates.base import (
    Binding,
    Context,
    Template,
    level_rows,
    line_fit,
    per_dataset,
    pick,
    swapped,
)

MARGIN = 1.05  # the best entity's score must beat the runner-up's by this factor
SPLIT_QUANTILES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def _strongest(context: Context, binding: Binding) -> str:
    table = context.table
    others = [name for name in context.numeric_columns() if name != binding["target"]]
    method = binding.get("method", "spearman")
    strength = {name: abs(table[name].corr(table[binding["target"]], method=method)) for name in others}
    ranked = sorted(strength, key=lambda name: (-strength[name], name))
    return ranked[-1] if binding.get("weakest") else ranked[0]


def _most_group_dependent(context: Context, binding: Binding) -> str:
    test = stats.kruskal if binding.get("statistic") == "kruskal" else stats.f_oneway
    f = {name: test(*(level_rows(context, level)[name] for level in context.levels())).statistic
         for name in context.numeric_columns()}
    ranked = sorted(f, key=lambda name: (-f[name], name))
    return ranked[-1] if binding.get("weakest") else ranked[0]


def _best(scores: dict[str, float]) -> str:
    """The highest-scoring name (ties by name)."""
    return sorted(scores, key=lambda name: (-scores[name], name))[0]


def _clear_winner(scores: dict[str, float]) -> bool:
    top, runner_up = sorted(scores.values(), reverse=True)[:2]
    return top > MARGIN * runner_up


def _ancestor_pairs(context: Context) -> list[tuple[str, str]]:
    """(x, y) pairs where y is computed and x one of its ancestors."""
    return [(x, y) for y in context.measured(("internal", "target")) for x in sorted(context.scenario.ancestors(y))]


# --- the strongest pairwise correlation among listed columns (a number) ---

def _bind_columns(context: Context, rng: np.random.Generator) -> Binding | None:
    names = context.numeric_columns()
    return {"columns": ", ".join(sorted(pick(rng, names, 5)))} if len(names) >= 5 else None


@per_dataset
def _pair_correlations(context: Context, names: list[str], method: str) -> dict[tuple[str, str], float]:
    matrix = context.table[names].corr(method=method)
    return {(a, b): float(matrix.loc[a, b]) for a, b in combinations(names, 2)}


def _strongest_pair(context: Context, binding: Binding) -> float:
    r = _pair_correlations(context, binding["columns"].split(", "), binding.get("method", "pearson"))
    return max(r.values()) if binding.get("signed") else max(abs(v) for v in r.values())


def _replace_best_member(context: Context, binding: Binding) -> list[Binding]:
    """The search run over a list where one column of the strongest pair is swapped for an unlisted one."""
    names = binding["columns"].split(", ")
    r = _pair_correlations(context, names, "pearson")
    first = max(r, key=lambda pair: abs(r[pair]))[0]
    unlisted = [name for name in context.numeric_columns() if name not in names]
    return [binding | {"columns": ", ".join(sorted([*(n for n in names if n != first), other]))}
            for other in unlisted[:2]]


# --- the level of the group where the slope of y on x is steepest (an entity) ---

@per_dataset
def _level_scores(context: Context, binding: Binding) -> dict[str, float]:
    by = binding.get("by", "slope")
    scores = {}
    for level in context.levels():
        rows = level_rows(context, level)
        x, y = rows[binding["x"]].to_numpy(), rows[binding["y"]].to_numpy()
        if by == "correlation":
            scores[level] = abs(float(np.corrcoef(x, y)[0, 1]))
        else:
            slope = float(line_fit(x, y, 1)[0])
            scores[level] = slope if by == "signed" else abs(slope)
    return scores


def _steepest_level(context: Context, binding: Binding) -> str:
    return _best(_level_scores(context, binding))


def _bind_group_slope(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _ancestor_pairs(context)
    if len(context.levels()) < 3 or not pairs:
        return None
    x, y = pairs[rng.integers(len(pairs))]
    binding = {"x": x, "y": y}
    return binding if _clear_winner(_level_scores(context, binding)) else None


# --- the column with the most outliers by Tukey's rule (an entity among listed columns) ---

def _outlier_count(values: np.ndarray, rule: str) -> int:
    if rule == "3sd":
        return int((np.abs(values - values.mean()) > 3 * values.std(ddof=1)).sum())
    k = 3.0 if rule == "tukey3" else 1.5
    q1, q3 = np.percentile(values, [25, 75])
    return int(((values < q1 - k * (q3 - q1)) | (values > q3 + k * (q3 - q1))).sum())


@per_dataset
def _outlier_counts(context: Context, names: list[str], rule: str = "tukey") -> dict[str, int]:
    return {name: _outlier_count(context.table[name].to_numpy(dtype=float), rule) for name in names}


def _most_outliers(context: Context, binding: Binding) -> str:
    counts = _outlier_counts(context, binding["candidates"].split(", "), binding.get("rule", "tukey"))
    return _best({name: -count for name, count in counts.items()} if binding.get("fewest") else counts)


def _bind_outliers(context: Context, rng: np.random.Generator) -> Binding | None:
    counts = _outlier_counts(context, context.numeric_columns())
    flagged = [name for name, count in counts.items() if count > 0]
    clean = [name for name, count in counts.items() if count == 0]
    if len(flagged) < 2:
        return None
    chosen = pick(rng, flagged, min(3, len(flagged)))
    chosen += pick(rng, clean, min(4 - len(chosen), len(clean)))
    top, runner_up = sorted((counts[name] for name in chosen), reverse=True)[:2]
    if len(chosen) < 4 or top < runner_up + max(2, 0.1 * top):
        return None
    return {"candidates": ", ".join(sorted(chosen))}


# --- the threshold of x that best splits y, searched over a stated grid (the gap it leaves, a number) ---

def _bind_split(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _ancestor_pairs(context)
    if not pairs:
        return None
    x, y = pairs[rng.integers(len(pairs))]
    grid = sorted({f"{value:.3g}" for value in context.table[x].quantile(list(SPLIT_QUANTILES))}, key=float)
    return {"x": x, "y": y, "grid": ", ".join(grid)} if len(grid) >= 5 else None


def _split_gap(context: Context, binding: Binding) -> float:
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    best, gap = np.inf, float("nan")
    for threshold in (float(t) for t in binding["grid"].split(", ")):
        low, high = y[x <= threshold], y[x > threshold]
        if not len(low) or not len(high):
            continue
        difference = float(high.mean() - low.mean())
        if binding.get("criterion") == "gap":
            score = -abs(difference)
        else:
            score = float(((low - low.mean()) ** 2).sum() + ((high - high.mean()) ** 2).sum())
        if score < best:
            best, gap = score, difference
    return -gap if binding.get("reversed") else gap


def _other_split_targets(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"y": other} for other in context.measured(("internal", "target"))
            if other not in (binding["x"], binding["y"])][:2]


# --- the listed column with the largest partial correlation with a target given another (an entity) ---

def _residuals(context: Context, name: str, given: str) -> np.ndarray:
    design = np.column_stack([np.ones(len(context.table)), context.table[given].to_numpy(dtype=float)])
    values = context.table[name].to_numpy(dtype=float)
    return values - design @ np.linalg.lstsq(design, values, rcond=None)[0]


@per_dataset
def _partial_scores(context: Context, binding: Binding) -> dict[str, float]:
    names, target, given = binding["candidates"].split(", "), binding["target"], binding["condition"]
    if binding.get("raw"):
        return {name: abs(float(context.table[name].corr(context.table[target]))) for name in names}
    residual = _residuals(context, target, given)
    return {name: abs(float(np.corrcoef(_residuals(context, name, given), residual)[0, 1])) for name in names}


def _largest_partial(context: Context, binding: Binding) -> str:
    return _best(_partial_scores(context, binding))


def _bind_partial(context: Context, rng: np.random.Generator) -> Binding | None:
    pairs = _ancestor_pairs(context)
    if not pairs:
        return None
    given, target = pairs[rng.integers(len(pairs))]
    others = [name for name in context.numeric_columns() if name not in (given, target)]
    if len(others) < 4:
        return None
    binding = {"target": target, "condition": given, "candidates": ", ".join(sorted(pick(rng, others, 4)))}
    return binding if _clear_winner(_partial_scores(context, binding)) else None


TEMPLATES = [
    Template("exploratory.strongest_association", "exploratory",
             "Among all numeric columns, which one is most strongly associated with {target} by the absolute"
             " Spearman rank correlation?",
             "entity", lambda c, rng: {"target": pick(rng, c.measured(("internal", "target")))[0]}, _strongest,
             lambda c, b: [b | {"weakest": 1.0}], lambda c, b: [b | {"method": "pearson"}]),
    Template("exploratory.group_dependent_column", "exploratory",
             "Which numeric column differs most across the levels of {group} (largest one-way ANOVA F)?",
             "entity", lambda c, rng: {}, _most_group_dependent, lambda c, b: [b | {"weakest": 1.0}],
             lambda c, b: [b | {"statistic": "kruskal"}]),
    Template("exploratory.strongest_pair_correlation", "exploratory",
             "Among the columns {columns}, compute the Pearson correlation of every pair. What is the largest"
             " absolute correlation over these pairs?",
             "number", _bind_columns, _strongest_pair, _replace_best_member,
             lambda c, b: [b | {"method": "spearman"}, b | {"signed": 1.0}]),
    Template("exploratory.steepest_group_slope", "exploratory",
             "Within each level of {group}, fit an ordinary least-squares line (with intercept) of {y} on {x}."
             " In which level is the line steepest, that is, has the largest absolute slope?",
             "entity", _bind_group_slope, _steepest_level, lambda c, b: [swapped(b, "x", "y")],
             lambda c, b: [b | {"by": "correlation"}, b | {"by": "signed"}]),
    Template("exploratory.most_outliers", "exploratory",
             "Of {candidates}, which column has the most outliers by Tukey's rule: values below Q1 - 1.5 IQR or"
             " above Q3 + 1.5 IQR, with the quartiles Q1 and Q3 by linear interpolation over all samples?",
             "entity", _bind_outliers, _most_outliers, lambda c, b: [b | {"fewest": 1.0}],
             lambda c, b: [b | {"rule": "3sd"}, b | {"rule": "tukey3"}]),
    Template("exploratory.best_split_gap", "exploratory",
             "Split the samples into those with {x} at or below a threshold and those above it, trying each"
             " threshold of {grid} ({x_unit}). Take the threshold whose split leaves the smallest total"
             " within-side sum of squared deviations of {y} from its side's mean. At that threshold, what is the"
             " mean {y} above it minus the mean {y} at or below it (in {y_unit})?",
             "number", _bind_split, _split_gap,
             lambda c, b: [b | {"reversed": 1.0}, *_other_split_targets(c, b)],
             lambda c, b: [b | {"criterion": "gap"}], tolerance=0.03),
    Template("exploratory.largest_partial_correlation", "exploratory",
             "Of {candidates}, which column has the largest absolute partial correlation with {target} given"
             " {condition} (the Pearson correlation of the residuals after an ordinary least-squares regression,"
             " with intercept, of each on {condition})?",
             "entity", _bind_partial, _largest_partial, lambda c, b: [swapped(b, "target", "condition")],
             lambda c, b: [b | {"raw": 1.0}]),
]
