"""Inferential templates: test statistics and interval bounds computed from the observed table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from stages.generate.sda.templates.base import (
    Binding,
    Context,
    Template,
    level_rows,
    one_variable,
    pick,
    quantile,
    swapped,
)


def _levels(context: Context, binding: Binding, variable: str | None = None) -> list[np.ndarray]:
    name = variable or binding["variable"]
    return [level_rows(context, level)[name].to_numpy() for level in (binding["a"], binding["b"])]


def _bind_two_levels(context: Context, rng: np.random.Generator) -> Binding:
    a, b = pick(rng, context.levels(), 2)
    return {"variable": pick(rng, context.measured())[0], "a": a, "b": b}


def _welch(context: Context, binding: Binding) -> float:
    first, second = _levels(context, binding)
    if binding.get("effect_size"):  # Cohen's d (pooled SD) reported in place of the test statistic
        pooled = ((len(first) - 1) * first.var(ddof=1) + (len(second) - 1) * second.var(ddof=1)) / (
            len(first) + len(second) - 2)
        return float((first.mean() - second.mean()) / np.sqrt(pooled))
    # Student's pooled t coincides with Welch's when the levels are the same size (as generated here)
    return float(stats.ttest_ind(first, second, equal_var=binding.get("pooled", 0.0) == 1.0).statistic)


def _bind_pair(context: Context, rng: np.random.Generator) -> Binding:
    x, y = pick(rng, context.measured(), 2)
    return {"x": x, "y": y, "bound": pick(rng, ["lower", "upper"])[0]}


def _correlation_bound(context: Context, binding: Binding) -> float:
    x, y = context.table[binding["x"]].to_numpy(), context.table[binding["y"]].to_numpy()
    r = np.corrcoef(x, y)[0, 1]
    half = 1.959963984540054 / np.sqrt(len(x) - 3)
    z = np.arctanh(r) + (-half if binding["bound"] == "lower" else half)
    return float(np.tanh(z))


def _anova(context: Context, binding: Binding) -> float:
    groups = [level_rows(context, level)[binding["variable"]] for level in context.levels()]
    if binding.get("ranks"):
        return float(stats.kruskal(*groups).statistic)
    return float(stats.f_oneway(*groups).statistic)


def _three_figures(value: float) -> float:
    """A reference value as a question states it: three significant figures."""
    return float(f"{value:.3g}")


def _by_level(context: Context, variable: str) -> list[np.ndarray]:
    """A variable's values in each level of the group factor, in level order."""
    return [level_rows(context, level)[variable].to_numpy(dtype=float) for level in context.levels()]


def _other_variable(context: Context, binding: Binding) -> list[Binding]:
    """One other variable in the same test (one only, so the test-variant confusions get their MCQ options)."""
    return [binding | {"variable": other} for other in context.measured() if other != binding["variable"]][:1]


def _mann_whitney_u(context: Context, binding: Binding) -> float:
    first, second = _levels(context, binding)
    u = float(stats.mannwhitneyu(first, second, alternative="two-sided").statistic)
    if binding.get("rank_sum"):  # Wilcoxon's rank sum of the first sample instead of its U
        return u + len(first) * (len(first) + 1) / 2
    return u


def _bind_one_sample(context: Context, rng: np.random.Generator) -> Binding:
    variable = pick(rng, context.measured())[0]
    reference = _three_figures(float(quantile(context, variable, float(rng.choice([0.3, 0.5, 0.7])))))
    return {"variable": variable, "level": pick(rng, context.levels())[0], "reference": reference}


def _one_sample_t(context: Context, binding: Binding) -> float:
    table = context.table
    rows = table if binding.get("whole_table") else level_rows(context, binding["level"])
    values = rows[binding["variable"]].to_numpy(dtype=float)
    if binding.get("no_sqrt_n"):  # the standardized difference (Cohen's d), the standard error forgotten
        return float((values.mean() - binding["reference"]) / values.std(ddof=1))
    return float(stats.ttest_1samp(values, binding["reference"]).statistic)


def _other_levels(context: Context, binding: Binding) -> list[Binding]:
    return [binding | {"level": other} for other in context.levels() if other != binding["level"]]


def _median_split_chi_square(context: Context, binding: Binding) -> float:
    table = context.table
    values = table[binding["variable"]]
    cut = values.mean() if binding.get("mean_split") else values.median()
    counts = pd.crosstab(table[context.scenario.group], values > cut).to_numpy()
    result = stats.chi2_contingency(counts, correction=bool(binding.get("yates")),
                                    lambda_="log-likelihood" if binding.get("likelihood_ratio") else None)
    return float(result.statistic)


def _chi_square_variants(context: Context, binding: Binding) -> list[Binding]:
    variants = [binding | {"likelihood_ratio": 1.0}, binding | {"mean_split": 1.0}]
    if len(context.levels()) == 2:  # a 2 x 2 table, where software applies Yates' correction by default
        variants.append(binding | {"yates": 1.0})
    return variants


def _bind_edge(context: Context, rng: np.random.Generator) -> Binding | None:
    edges = context.scenario.edges()  # a mechanism's input and output: a regression worth fitting
    if not edges:
        return None
    x, y = edges[rng.integers(len(edges))]
    return {"x": x, "y": y}


def _slope_margin(context: Context, binding: Binding) -> float:
    x, y = context.table[binding["x"]].to_numpy(dtype=float), context.table[binding["y"]].to_numpy(dtype=float)
    fit = stats.linregress(x, y)
    if binding.get("standard_error"):  # one standard error, no critical value
        return float(fit.stderr)
    level = 0.95 if binding.get("one_sided") else 0.975
    return float(stats.t.ppf(level, len(x) - 2) * fit.stderr)


def _levene(context: Context, binding: Binding) -> float:
    groups = _by_level(context, binding["variable"])
    if binding.get("bartlett"):
        return float(stats.bartlett(*groups).statistic)
    return float(stats.levene(*groups, center=binding.get("center", "mean")).statistic)


def _kruskal(context: Context, binding: Binding) -> float:
    groups = _by_level(context, binding["variable"])
    if binding.get("anova") == "values":
        return float(stats.f_oneway(*groups).statistic)
    if binding.get("anova") == "ranks":  # the rank-transform F, which orders like H but is not H
        ranks = stats.rankdata(np.concatenate(groups))
        return float(stats.f_oneway(*np.split(ranks, np.cumsum([len(g) for g in groups])[:-1])).statistic)
    return float(stats.kruskal(*groups).statistic)


TEMPLATES = [
    Template("inferential.welch_t", "inferential",
             "Compare {variable} between the samples whose {group} is {a} and those whose {group} is {b} with"
             " Welch's two-sample t-test ({a} first). What is the t statistic?",
             "number", _bind_two_levels, _welch, lambda c, b: [swapped(b, "a", "b")],
             lambda c, b: [b | {"pooled": 1.0}, b | {"effect_size": 1.0}]),
    Template("inferential.correlation_interval", "inferential",
             "What is the {bound} bound of the 95% confidence interval (Fisher z) for the Pearson correlation"
             " between {x} and {y}?",
             "number", _bind_pair, _correlation_bound,
             lambda c, b: [b | {"y": other} for other in c.measured() if other not in (b["x"], b["y"])][:2],
             lambda c, b: [b | {"bound": "upper" if b["bound"] == "lower" else "lower"}]),
    Template("inferential.anova_f", "inferential",
             "What is the F statistic of a one-way ANOVA of {variable} across the levels of {group}?",
             "number", one_variable, _anova,
             lambda c, b: [b | {"variable": other} for other in c.measured() if other != b["variable"]][:2],
             lambda c, b: [b | {"ranks": 1.0}]),
    Template("inferential.mann_whitney_u", "inferential",
             "Compare {variable} between the samples whose {group} is {a} and those whose {group} is {b} with a"
             " two-sided Mann-Whitney U test. What is the U statistic of the {a} samples (the number of ({a}, {b})"
             " pairs in which the {a} value is the larger, ties counting one half)?",
             "number", _bind_two_levels, _mann_whitney_u, lambda c, b: [swapped(b, "a", "b")],
             lambda c, b: [b | {"rank_sum": 1.0}]),
    Template("inferential.one_sample_t", "inferential",
             "Test whether the mean {variable} of the samples whose {group} is {level} differs from {reference}"
             " {variable_unit} with a one-sample t-test. What is the t statistic?",
             "number", _bind_one_sample, _one_sample_t, _other_levels,
             lambda c, b: [b | {"no_sqrt_n": 1.0}, b | {"whole_table": 1.0}]),
    Template("inferential.median_split_chi_square", "inferential",
             "Classify the samples as high (above the median of {variable}) or low (at or below it) and"
             " cross-tabulate this against {group}. What is Pearson's chi-square statistic of independence,"
             " without continuity correction?",
             "number", one_variable, _median_split_chi_square,
             _other_variable, _chi_square_variants),
    Template("inferential.slope_margin", "inferential",
             "Regress {y} on {x} by ordinary least squares with an intercept. What is the half-width of the"
             " two-sided 95% confidence interval of the slope (t-based, in {y_unit} per {x_unit})?",
             "number", _bind_edge, _slope_margin, lambda c, b: [swapped(b, "x", "y")],
             lambda c, b: [b | {"one_sided": 1.0}, b | {"standard_error": 1.0}]),
    Template("inferential.levene_w", "inferential",
             "Test whether {variable} has the same variance in every level of {group} with Levene's test"
             " (absolute deviations from each level's mean). What is the W statistic?",
             "number", one_variable, _levene, _other_variable,
             lambda c, b: [b | {"center": "median"}, b | {"bartlett": 1.0}]),
    Template("inferential.kruskal_h", "inferential",
             "What is the Kruskal-Wallis H statistic of {variable} across the levels of {group}?",
             "number", one_variable, _kruskal, _other_variable,
             lambda c, b: [b | {"anova": "values"}, b | {"anova": "ranks"}]),
]
