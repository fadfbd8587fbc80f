"""Descriptive templates: summaries of observed variables, overall or within a subset."""

from __future__ import annotations

import numpy as np
from scipy import stats

from stages.generate.sda.templates.base import (
    Binding,
    Context,
    Template,
    level_rows,
    one_variable,
    per_dataset,
    pick,
    quantile,
)

STATISTICS = {"median": np.median, "mean": np.mean, "standard deviation": lambda v: np.std(v, ddof=1)}


def _group_statistic(context: Context, binding: Binding) -> float:
    rows = level_rows(context, binding["level"])
    return float(STATISTICS[binding["statistic"]](rows[binding["variable"]].to_numpy()))


def _bind_group_statistic(context: Context, rng: np.random.Generator) -> Binding:
    return {"statistic": pick(rng, list(STATISTICS))[0], "variable": pick(rng, context.measured())[0],
            "level": pick(rng, context.levels())[0]}


def _other_statistics(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"statistic": other} for other in STATISTICS if other != binding["statistic"]]


def _other_levels(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"level": other} for other in context.levels() if other != binding["level"]]


def _conditional_mean(context: Context, binding: Binding) -> float:
    table = context.table
    rows = table[table[binding["condition"]] > binding["threshold"]]
    return float(rows[binding["variable"]].mean()) if len(rows) else float("nan")


def _bind_conditional_mean(context: Context, rng: np.random.Generator) -> Binding:
    variable, condition = pick(rng, context.measured(), 2)
    share = float(rng.choice([0.25, 0.5, 0.75]))
    threshold = float(np.round(quantile(context, condition, share), 3))
    return {"variable": variable, "condition": condition, "threshold": threshold}


def _share_above(context: Context, binding: Binding) -> float:
    return float((context.table[binding["variable"]] > binding["threshold"]).mean())


def _bind_share_above(context: Context, rng: np.random.Generator) -> Binding:
    variable = pick(rng, context.measured())[0]
    share = float(rng.uniform(0.15, 0.85))
    return {"variable": variable, "threshold": float(np.round(quantile(context, variable, share), 3))}


def _highest_level(context: Context, binding: Binding) -> str:
    means = context.table.groupby(context.scenario.group, observed=True)[binding["variable"]].mean()
    return str(means.idxmax() if binding["extreme"] == "highest" else means.idxmin())


def _bind_highest_level(context: Context, rng: np.random.Generator) -> Binding:
    return {"variable": pick(rng, context.measured())[0], "extreme": pick(rng, ["highest", "lowest"])[0]}


def _iqr(context: Context, binding: Binding) -> float:
    low, high = np.percentile(context.table[binding["variable"]].to_numpy(), [25, 75])
    return float(high - low)


def _range_ratio(context: Context, binding: Binding) -> float:
    values = context.table[binding["variable"]].to_numpy()
    return float(np.percentile(values, 90) / np.percentile(values, 10))


def _bind_positive(context: Context, rng: np.random.Generator) -> Binding | None:
    positive = [name for name in context.measured() if context.scenario.variable(name).low > 0]
    return {"variable": pick(rng, positive)[0]} if positive else None


def _swap_variable(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"variable": other} for other in context.measured() if other != binding["variable"]][:3]


def _three_figures(value: float) -> float:
    """A threshold as a question states it: three significant figures."""
    return float(f"{value:.3g}")


def _subset(context: Context, binding: Binding, variable: str | None = None) -> np.ndarray:
    """A variable's values in the binding's level (over the whole table under the `whole_table` flag)."""
    table = context.table
    rows = table if binding.get("whole_table") else level_rows(context, binding["level"])
    return rows[variable or binding["variable"]].to_numpy(dtype=float)


@per_dataset
def _positive_variables(context: Context) -> list[str]:
    """Measured variables positive in every sample (ratios to the mean and logarithms are defined)."""
    return [name for name in context.measured() if bool((context.table[name] > 0).all())]


def _whole_table(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"whole_table": 1.0}]


DISPERSIONS = {
    "cv": lambda v: np.std(v, ddof=1) / np.mean(v),
    "variance_to_mean": lambda v: np.var(v, ddof=1) / np.mean(v),  # the index of dispersion (Fano factor)
    "mean_to_sd": lambda v: np.mean(v) / np.std(v, ddof=1),  # the ratio upside down (signal-to-noise)
}


def _coefficient_of_variation(context: Context, binding: Binding) -> float:
    return float(DISPERSIONS[binding.get("dispersion", "cv")](_subset(context, binding)))


def _bind_positive_in_level(context: Context, rng: np.random.Generator) -> Binding | None:
    positive = _positive_variables(context)
    return {"variable": pick(rng, positive)[0], "level": pick(rng, context.levels())[0]} if positive else None


def _subset_percentile(context: Context, binding: Binding) -> float:
    return float(np.percentile(_subset(context, binding), binding["percentile"]))


def _bind_subset_percentile(context: Context, rng: np.random.Generator) -> Binding:
    return {"percentile": float(rng.choice([10, 25, 75, 90])), "variable": pick(rng, context.measured())[0],
            "level": pick(rng, context.levels())[0]}


def _group_correlation(context: Context, binding: Binding) -> float:
    x, y = _subset(context, binding, binding["x"]), _subset(context, binding, binding["y"])
    if binding.get("spearman"):
        return float(stats.spearmanr(x, y).statistic)
    return float(np.corrcoef(x, y)[0, 1])


def _bind_group_correlation(context: Context, rng: np.random.Generator) -> Binding | None:
    edges = context.scenario.edges()  # a mechanism's input and output: a pair worth correlating
    if not edges:
        return None
    x, y = edges[rng.integers(len(edges))]
    return {"x": x, "y": y, "level": pick(rng, context.levels())[0]}


def _count_above_in_level(context: Context, binding: Binding) -> float:
    values = _subset(context, binding)
    if binding.get("at_or_below"):
        return float(np.sum(values <= binding["threshold"]))
    return float(np.sum(values > binding["threshold"]))


def _bind_count_above_in_level(context: Context, rng: np.random.Generator) -> Binding:
    variable = pick(rng, context.measured())[0]
    threshold = _three_figures(float(quantile(context, variable, float(rng.uniform(0.25, 0.75)))))
    return {"variable": variable, "level": pick(rng, context.levels())[0], "threshold": threshold}


MEANS = {
    "geometric": lambda v: np.exp(np.mean(np.log(v))),
    "arithmetic": np.mean,
    "log": lambda v: np.mean(np.log(v)),  # the mean of the logarithms, not transformed back
}


def _geometric_mean(context: Context, binding: Binding) -> float:
    return float(MEANS[binding.get("mean", "geometric")](context.table[binding["variable"]].to_numpy(dtype=float)))


def _bind_positive_column(context: Context, rng: np.random.Generator) -> Binding | None:
    positive = _positive_variables(context)
    return {"variable": pick(rng, positive)[0]} if positive else None


def _other_positive(context: Context, binding: Binding) -> list[Binding]:
    """One other positive variable (one only, so the wrong-mean confusions get their MCQ options)."""
    return [binding | {"variable": other} for other in _positive_variables(context) if other != binding["variable"]][:1]


TEMPLATES = [
    Template("descriptive.group_statistic", "descriptive",
             "What is the {statistic} of {variable} (in {variable_unit}) over the samples whose {group} is {level}?",
             "number", _bind_group_statistic, _group_statistic, _other_levels, _other_statistics),
    Template("descriptive.conditional_mean", "descriptive",
             "What is the mean {variable} (in {variable_unit}) over the samples whose {condition} is above"
             " {threshold} {condition_unit}?",
             "number", _bind_conditional_mean, _conditional_mean,
             lambda c, b: [b | {"variable": b["condition"], "condition": b["variable"]}],
             lambda c, b: [b | {"threshold": b["threshold"] * f} for f in (0.8, 1.2)]),
    Template("descriptive.share_above", "descriptive",
             "What fraction of the samples (between 0 and 1) have {variable} above {threshold} {variable_unit}?",
             "number", _bind_share_above, _share_above, _swap_variable,
             lambda c, b: [b | {"threshold": b["threshold"] * f} for f in (0.7, 1.3)]),
    Template("descriptive.extreme_level", "descriptive",
             "Which {group} has the {extreme} mean {variable}?",
             "entity", _bind_highest_level, _highest_level, _swap_variable,
             lambda c, b: [b | {"extreme": "lowest" if b["extreme"] == "highest" else "highest"}]),
    Template("descriptive.interquartile_range", "descriptive",
             "What is the interquartile range (75th minus 25th percentile) of {variable} in {variable_unit}?",
             "number", one_variable, _iqr, _swap_variable),
    Template("descriptive.decile_ratio", "descriptive",
             "What is the ratio of the 90th to the 10th percentile of {variable}?",
             "number", _bind_positive, _range_ratio, _swap_variable),
    Template("descriptive.coefficient_of_variation", "descriptive",
             "What is the coefficient of variation (sample standard deviation with n - 1 divided by the mean, as a"
             " ratio) of {variable} over the samples whose {group} is {level}?",
             "number", _bind_positive_in_level, _coefficient_of_variation, _other_levels,
             lambda c, b: [b | {"dispersion": "variance_to_mean"}, b | {"dispersion": "mean_to_sd"},
                           *_whole_table(c, b)]),
    Template("descriptive.subset_percentile", "descriptive",
             "What is the {percentile}th percentile (linear interpolation between order statistics) of {variable}"
             " (in {variable_unit}) over the samples whose {group} is {level}?",
             "number", _bind_subset_percentile, _subset_percentile, _other_levels,
             lambda c, b: [b | {"percentile": 100.0 - b["percentile"]}, *_whole_table(c, b)]),
    Template("descriptive.group_correlation", "descriptive",
             "What is the Pearson correlation coefficient between {x} and {y} over the samples whose {group} is"
             " {level}?",
             "number", _bind_group_correlation, _group_correlation, _other_levels,
             lambda c, b: [b | {"spearman": 1.0}, *_whole_table(c, b)]),
    Template("descriptive.count_above_in_level", "descriptive",
             "How many of the samples whose {group} is {level} have {variable} strictly above {threshold}"
             " {variable_unit}?",
             "number", _bind_count_above_in_level, _count_above_in_level, _other_levels,
             lambda c, b: [b | {"at_or_below": 1.0}, *_whole_table(c, b)]),
    Template("descriptive.geometric_mean", "descriptive",
             "What is the geometric mean of {variable} (in {variable_unit}) over all samples?",
             "number", _bind_positive_column, _geometric_mean, _other_positive,
             lambda c, b: [b | {"mean": "arithmetic"}, b | {"mean": "log"}]),
]
