"""Exploratory and predictive SDA templates: answers checked by an independent path, then on generated data.

The small tables are written out (or drawn from a fixed seed) over one scenario's column names; each
answer is recomputed with another library (scikit-learn, scipy) or by a different formula, and the
designed tables also pin the answer to a known value.
"""

from functools import cache

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler
from sklearn.tree import DecisionTreeRegressor

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import Simulation, simulate
from stages.generate.sda.templates import Context, exploratory, predictive

TEMPLATES = {t.id: t for t in (*exploratory.TEMPLATES, *predictive.TEMPLATES)}
SCENARIO = next(s for s in load_scenarios() if len(s.groups[s.group]) >= 3)
GROUP, LEVELS = SCENARIO.group, SCENARIO.groups[SCENARIO.group]
A, B, C, D, E, F = [v.name for v in SCENARIO.variables][:6]
N1, N2 = [d.name for d in SCENARIO.distractors][:2]


def context_of(columns: dict[str, np.ndarray | list[float]], n: int, seed: int = 7) -> Context:
    """A table of n rows over the scenario's columns: the given ones, the rest drawn from a fixed seed."""
    rng = np.random.default_rng(seed)
    table = {"sample_id": [f"s{i + 1:04d}" for i in range(n)], GROUP: [LEVELS[i % 3] for i in range(n)]}
    for name in [*(v.name for v in SCENARIO.variables), *(d.name for d in SCENARIO.distractors)]:
        table[name] = np.asarray(columns[name], dtype=float) if name in columns else np.round(rng.uniform(1, 10, n), 3)
    return Context(SCENARIO, Simulation(true={}, table=pd.DataFrame(table), hidden={}))


def derive(template_id: str, context: Context, binding: dict) -> float | str:
    return TEMPLATES[template_id].derive(context, binding)


def argmax(scores: dict[str, float]) -> str:
    return sorted(scores, key=lambda name: (-scores[name], name))[0]


# --- exploratory ---

def test_strongest_association_follows_scipy_rank_correlations():
    rng = np.random.default_rng(1)
    target = np.round(rng.uniform(1, 3, 12), 3)
    context = context_of({C: target, D: np.exp(target)}, 12)
    others = [name for name in context.numeric_columns() if name != C]
    spearman = {name: abs(stats.spearmanr(context.table[name], target).statistic) for name in others}
    pearson = {name: abs(stats.pearsonr(context.table[name], target).statistic) for name in others}
    binding = {"target": C}
    assert derive("exploratory.strongest_association", context, binding) == D == argmax(spearman)
    weakest = sorted(spearman, key=lambda name: (-spearman[name], name))[-1]
    assert derive("exploratory.strongest_association", context, binding | {"weakest": 1.0}) == weakest
    assert derive("exploratory.strongest_association", context, binding | {"method": "pearson"}) == argmax(pearson)


def test_group_dependent_column_is_the_largest_f_by_sums_of_squares():
    context = context_of({E: [100.0 * (i % 3) + (i % 4) for i in range(12)]}, 12)
    table = context.table

    def f_statistic(name: str) -> float:
        groups = [table.loc[table[GROUP] == level, name].to_numpy() for level in LEVELS]
        grand = table[name].mean()
        between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (len(groups) - 1)
        within = sum(((g - g.mean()) ** 2).sum() for g in groups) / (len(table) - len(groups))
        return between / within

    f = {name: f_statistic(name) for name in context.numeric_columns()}
    assert derive("exploratory.group_dependent_column", context, {}) == E == argmax(f)
    weakest = sorted(f, key=lambda name: (-f[name], name))[-1]
    assert derive("exploratory.group_dependent_column", context, {"weakest": 1.0}) == weakest
    groups = {name: [table.loc[table[GROUP] == level, name] for level in LEVELS] for name in context.numeric_columns()}
    h = {name: stats.kruskal(*groups[name]).statistic for name in groups}
    assert derive("exploratory.group_dependent_column", context, {"statistic": "kruskal"}) == argmax(h)


def test_strongest_pair_correlation_is_one_for_an_exact_linear_pair_and_matches_scipy_otherwise():
    rng = np.random.default_rng(2)
    a = np.round(rng.uniform(0, 5, 15), 3)
    context = context_of({A: a, B: 1.0 - 2.0 * a}, 15)
    exact = {"columns": ", ".join(sorted([A, B, C, D, E]))}
    assert derive("exploratory.strongest_pair_correlation", context, exact) == pytest.approx(1.0, abs=1e-12)
    assert derive("exploratory.strongest_pair_correlation", context, exact | {"signed": 1.0}) < 0.99
    for variant in TEMPLATES["exploratory.strongest_pair_correlation"].diffusion(context, exact):
        listed = variant["columns"].split(", ")
        assert len(listed) == 5 and not {A, B} <= set(listed)  # a member of the exact pair was swapped out
    names = [C, D, E, F, N1]
    binding = {"columns": ", ".join(sorted(names))}
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
    table = context.table
    pearson = [stats.pearsonr(table[x], table[y]).statistic for x, y in pairs]
    spearman = [stats.spearmanr(table[x], table[y]).statistic for x, y in pairs]
    assert derive("exploratory.strongest_pair_correlation", context, binding) == pytest.approx(
        max(abs(r) for r in pearson), rel=1e-9)
    assert derive("exploratory.strongest_pair_correlation", context, binding | {"method": "spearman"}) == pytest.approx(
        max(abs(r) for r in spearman), rel=1e-9)
    assert derive("exploratory.strongest_pair_correlation", context, binding | {"signed": 1.0}) == pytest.approx(
        max(pearson), rel=1e-9)


def test_steepest_group_slope_matches_per_level_least_squares():
    x = [1.0, 4.0, 2.0, 7.0, 5.0, 3.0, 8.0, 6.0, 9.0, 2.5, 10.0, 4.5]
    noise = [0.3, -0.5, 0.0, 1.5, -0.2, 0.0, -0.4, 2.0, 0.0, 0.1, -1.5, 0.0]
    slope = {LEVELS[0]: 1.0, LEVELS[1]: -3.0, LEVELS[2]: 2.0}  # rows cycle through the levels
    y = [slope[LEVELS[i % 3]] * x[i] + noise[i] for i in range(12)]
    context = context_of({A: x, D: y}, 12)
    binding = {"x": A, "y": D}
    table = context.table

    def per_level(regressor: str, response: str) -> dict[str, float]:
        fitted = {}
        for level in LEVELS:
            rows = table[table[GROUP] == level]
            fitted[level] = LinearRegression().fit(rows[[regressor]], rows[response]).coef_[0]
        return fitted

    slopes = per_level(A, D)
    assert derive("exploratory.steepest_group_slope", context, binding) == LEVELS[1] == argmax(
        {k: abs(v) for k, v in slopes.items()})
    signed = derive("exploratory.steepest_group_slope", context, binding | {"by": "signed"})
    assert signed == LEVELS[2] == argmax(slopes)
    assert derive("exploratory.steepest_group_slope", context, binding | {"by": "correlation"}) == LEVELS[2]
    reverse = per_level(D, A)
    assert derive("exploratory.steepest_group_slope", context, {"x": D, "y": A}) == argmax(
        {k: abs(v) for k, v in reverse.items()})


def test_most_outliers_counts_tukey_fences():
    columns = {A: [*range(1, 12), 100],  # Q1 3.75, Q3 9.25: one outlier
               B: [*range(1, 10), 50, 60, 70],  # Q1 3.75, Q3 19.25: three
               C: list(range(1, 13)),  # none
               D: [*range(1, 11), -40, 60]}  # Q1 2.75, Q3 8.25: two
    context = context_of(columns, 12)
    binding = {"candidates": ", ".join(sorted(columns))}

    def count(name: str, rule: str) -> int:
        values = context.table[name]
        if rule == "3sd":
            return int((np.abs(stats.zscore(values, ddof=1)) > 3).sum())
        k = 3.0 if rule == "tukey3" else 1.5
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        return int(((values < q1 - k * (q3 - q1)) | (values > q3 + k * (q3 - q1))).sum())

    assert [count(name, "tukey") for name in (A, B, C, D)] == [1, 3, 0, 2]
    assert derive("exploratory.most_outliers", context, binding) == B
    assert derive("exploratory.most_outliers", context, binding | {"fewest": 1.0}) == C
    for rule in ("3sd", "tukey3"):
        expected = argmax({name: count(name, rule) for name in columns})
        assert derive("exploratory.most_outliers", context, binding | {"rule": rule}) == expected


def test_best_split_gap_on_a_step_and_against_a_depth_one_regression_tree():
    step = context_of({A: list(range(1, 13)), B: [0, 1, 0, 1, 0, 1, 10, 11, 10, 11, 10, 11]}, 12)
    binding = {"x": A, "y": B, "grid": "3, 6, 9"}
    assert derive("exploratory.best_split_gap", step, binding) == pytest.approx(10.0, abs=1e-12)
    assert derive("exploratory.best_split_gap", step, binding | {"reversed": 1.0}) == pytest.approx(-10.0, abs=1e-12)

    rng = np.random.default_rng(3)
    x = rng.permutation(np.arange(1.0, 21.0))
    y = np.round(rng.normal(0, 1, 20) + (x > 13) * 2.0 + (x > 5) * 0.7, 4)
    context = context_of({A: x, B: y}, 20)
    grid = ", ".join(f"{t:g}" for t in np.arange(1.5, 20.0))  # every midpoint: the tree's own candidates
    tree = DecisionTreeRegressor(max_depth=1, random_state=0).fit(x.reshape(-1, 1), y).tree_
    gap = tree.value[tree.children_right[0]].item() - tree.value[tree.children_left[0]].item()
    assert derive("exploratory.best_split_gap", context, {"x": A, "y": B, "grid": grid}) == pytest.approx(gap, rel=1e-9)
    gaps = {t: y[x > t].mean() - y[x <= t].mean() for t in np.arange(1.5, 20.0)}
    widest = max(gaps.values(), key=abs)
    assert derive("exploratory.best_split_gap", context, {"x": A, "y": B, "grid": grid, "criterion": "gap"}) == (
        pytest.approx(widest, rel=1e-9))


def test_largest_partial_correlation_matches_the_correlation_matrix_formula():
    rng = np.random.default_rng(4)
    a, own = rng.normal(0, 1, 30), rng.normal(0, 1, 30)
    columns = {A: a, E: own, C: a + 0.6 * own + 0.1 * rng.normal(0, 1, 30), D: a + 0.05 * rng.normal(0, 1, 30)}
    context = context_of(columns, 30)
    candidates = [B, D, E, F]
    binding = {"target": C, "condition": A, "candidates": ", ".join(sorted(candidates))}
    r = context.table[[*candidates, A, C]].corr()

    def partial(name: str) -> float:
        scale = np.sqrt((1 - r.loc[name, A] ** 2) * (1 - r.loc[C, A] ** 2))
        return (r.loc[name, C] - r.loc[name, A] * r.loc[C, A]) / scale

    assert derive("exploratory.largest_partial_correlation", context, binding) == E == argmax(
        {name: abs(partial(name)) for name in candidates})
    assert derive("exploratory.largest_partial_correlation", context, binding | {"raw": 1.0}) == D == argmax(
        {name: abs(r.loc[name, C]) for name in candidates})


# --- predictive ---

N_ROWS, N_TRAIN = 20, 14  # TRAIN_SHARE 0.7 of 20 rows


def predictive_context(seed: int = 5) -> Context:
    rng = np.random.default_rng(seed)
    a, b, c = (np.round(rng.uniform(1, 10, N_ROWS), 3) for _ in range(3))
    target = np.round(2 + 1.5 * a - 0.7 * b + 0.3 * a ** 2 + rng.normal(0, 1, N_ROWS), 4)
    return context_of({A: a, B: b, C: c, F: target, E: np.round(np.exp(0.2 * a + rng.normal(0, 0.1, N_ROWS)), 5)},
                      N_ROWS)


def split(context: Context, all_rows: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = context.table
    return (table if all_rows else table.iloc[:N_TRAIN]), table.iloc[N_TRAIN:]


def test_the_held_out_split_is_stated_and_follows_sample_id_not_row_order():
    context = predictive_context()
    binding = TEMPLATES["predictive.holdout_rmse"].bind(context, np.random.default_rng(0))
    assert binding["n_train"] == N_TRAIN and binding["first_test"] == f"s{N_TRAIN + 1:04d}"
    shuffled = Context(SCENARIO, Simulation({}, context.table.sample(frac=1.0, random_state=1), {}))
    bindings = {"predictive.holdout_rmse": {"target": F, "f1": A, "f2": B},
                "predictive.holdout_mean": {"target": F, "f1": A, "f2": B},
                "predictive.poly2_mae": {"target": F, "x": A}, "predictive.log_linear_r2": {"target": E, "x": A},
                "predictive.knn_rmse": {"target": F, "f1": A, "f2": B, "k": 3},
                "predictive.group_mean_r2": {"target": F},
                "predictive.new_sample": {"target": F, "f1": A, "f2": B, "v1": 5.0, "v2": 2.0},
                "predictive.best_feature_set": {"target": F, "candidates": f"{A}+{N1}, {B}+{N2}, {C}+{N1}"}}
    assert set(bindings) == {t.id for t in predictive.TEMPLATES}
    for template_id, binding in bindings.items():
        answer = derive(template_id, context, binding)
        expected = answer if isinstance(answer, str) else pytest.approx(answer, rel=1e-12)
        assert derive(template_id, shuffled, binding) == expected


@pytest.mark.parametrize("no_intercept", [False, True])
def test_holdout_rmse_and_mean_match_scikit_learn(no_intercept: bool):
    context = predictive_context()
    train, test = split(context)
    model = LinearRegression(fit_intercept=not no_intercept).fit(train[[A, B]], train[F])
    predicted = model.predict(test[[A, B]])
    binding = {"target": F, "f1": A, "f2": B} | ({"no_intercept": 1.0} if no_intercept else {})
    assert derive("predictive.holdout_rmse", context, binding) == pytest.approx(
        np.sqrt(mean_squared_error(test[F], predicted)), rel=1e-9)
    assert derive("predictive.holdout_mean", context, binding) == pytest.approx(predicted.mean(), rel=1e-9)


@pytest.mark.parametrize(("degree", "train_error"), [(2, False), (1, False), (2, True)])
def test_poly2_mae_matches_a_polynomial_pipeline(degree: int, train_error: bool):
    context = predictive_context()
    train, test = split(context)
    rows = train if train_error else test
    model = make_pipeline(PolynomialFeatures(degree), LinearRegression()).fit(train[[A]], train[F])
    binding = {"target": F, "x": A} | ({"degree": 1} if degree == 1 else {}) | (
        {"train_error": 1.0} if train_error else {})
    assert derive("predictive.poly2_mae", context, binding) == pytest.approx(
        mean_absolute_error(rows[F], model.predict(rows[[A]])), rel=1e-9)


def test_log_linear_r2_matches_scikit_learn_in_original_and_log_units():
    context = predictive_context()
    train, test = split(context)
    model = LinearRegression().fit(train[[A]], np.log(train[E]))
    log_predicted = model.predict(test[[A]])
    binding = {"target": E, "x": A}
    answer = derive("predictive.log_linear_r2", context, binding)
    assert answer == pytest.approx(r2_score(test[E], np.exp(log_predicted)), rel=1e-9) and answer > 0.1
    assert derive("predictive.log_linear_r2", context, binding | {"log_scale": 1.0}) == pytest.approx(
        r2_score(np.log(test[E]), log_predicted), rel=1e-9)


@pytest.mark.parametrize(("k", "raw"), [(3, False), (5, False), (3, True)])
def test_knn_rmse_matches_scikit_learn_neighbours(k: int, raw: bool):
    context = predictive_context()
    train, test = split(context)
    regressor = KNeighborsRegressor(n_neighbors=k, algorithm="brute")
    model = (regressor if raw else make_pipeline(StandardScaler(), regressor)).fit(train[[A, C]], train[F])
    binding = {"target": F, "f1": A, "f2": C, "k": k} | ({"raw": 1.0} if raw else {})
    assert derive("predictive.knn_rmse", context, binding) == pytest.approx(
        np.sqrt(mean_squared_error(test[F], model.predict(test[[A, C]]))), rel=1e-9)


@pytest.mark.parametrize("variant", ["grouped", "pooled", "all_rows"])
def test_group_mean_r2_matches_a_one_hot_regression(variant: str):
    context = predictive_context()
    train, test = split(context, all_rows=variant == "all_rows")
    if variant == "pooled":
        model = DummyRegressor(strategy="mean").fit(train[[GROUP]], train[F])
    else:
        model = make_pipeline(OneHotEncoder(), LinearRegression(fit_intercept=False)).fit(train[[GROUP]], train[F])
    binding = {"target": F} | ({variant: 1.0} if variant != "grouped" else {})
    assert derive("predictive.group_mean_r2", context, binding) == pytest.approx(
        r2_score(test[F], model.predict(test[[GROUP]])), rel=1e-9)


def test_group_mean_r2_on_a_written_out_table():
    target = [1, 10, 100, 3, 12, 104, 2, 11, 96, 4, 13, 100, 5, 14, 104]  # levels cycle; 10 training rows
    context = context_of({F: target}, 15)
    # training means by level: 2.5, 11, 100; held-out rows 13, 100, 5, 14, 104 (levels 1, 2, 0, 1, 2)
    residual = (13 - 11) ** 2 + 0 + (5 - 2.5) ** 2 + (14 - 11) ** 2 + 4 ** 2
    held_out = np.array([13, 100, 5, 14, 104])
    expected = 1 - residual / ((held_out - held_out.mean()) ** 2).sum()
    assert derive("predictive.group_mean_r2", context, {"target": F}) == pytest.approx(expected, rel=1e-12)


def test_new_sample_prediction_matches_scikit_learn():
    context = predictive_context()
    train, _ = split(context)
    binding = {"target": F, "f1": A, "f2": B, "v1": 6.5, "v2": 2.25}

    def predicted(values: list[float], rows: pd.DataFrame = train, intercept: bool = True) -> float:
        model = LinearRegression(fit_intercept=intercept).fit(rows[[A, B]], rows[F])
        return model.predict(pd.DataFrame([values], columns=[A, B]))[0]

    assert derive("predictive.new_sample", context, binding) == pytest.approx(predicted([6.5, 2.25]), rel=1e-9)
    template = TEMPLATES["predictive.new_sample"]
    assert derive("predictive.new_sample", context, template.diffusion(context, binding)[0]) == pytest.approx(
        predicted([2.25, 6.5]), rel=1e-9)
    assert derive("predictive.new_sample", context, binding | {"no_intercept": 1.0}) == pytest.approx(
        predicted([6.5, 2.25], intercept=False), rel=1e-9)
    assert derive("predictive.new_sample", context, binding | {"all_rows": 1.0}) == pytest.approx(
        predicted([6.5, 2.25], rows=context.table), rel=1e-9)


@pytest.mark.parametrize("variant", ["test", "no_intercept", "train_error"])
def test_best_feature_set_matches_scikit_learn(variant: str):
    context = predictive_context()
    train, test = split(context)
    sets = [f"{A}+{N1}", f"{B}+{N2}", f"{C}+{N1}", f"{D}+{N2}"]
    rows = train if variant == "train_error" else test
    errors = {}
    for features in sets:
        model = LinearRegression(fit_intercept=variant != "no_intercept").fit(train[features.split("+")], train[F])
        errors[features] = mean_squared_error(rows[F], model.predict(rows[features.split("+")]))
    binding = {"target": F, "candidates": ", ".join(sorted(sets))} | ({variant: 1.0} if variant != "test" else {})
    answer = derive("predictive.best_feature_set", context, binding)
    assert answer == min(errors, key=errors.get)
    if variant == "test":
        assert answer == f"{A}+{N1}"  # the target is built from A


# --- every template on generated datasets ---

@cache
def generated() -> tuple[Context, ...]:
    return tuple(Context(s, simulate(s, 400, 3)) for s in load_scenarios())


def differs(value: float | str, answer: float | str, tolerance: float) -> bool:
    if isinstance(answer, str):
        return value != answer
    return bool(np.isfinite(value)) and abs(value - answer) > 2 * tolerance * max(abs(answer), 1e-9)


def test_there_are_six_templates_of_each_type_with_unique_ids():
    assert len(exploratory.TEMPLATES) >= 6 and len(predictive.TEMPLATES) >= 6
    assert len(TEMPLATES) == len(exploratory.TEMPLATES) + len(predictive.TEMPLATES)
    for template in TEMPLATES.values():
        assert template.id.startswith(f"{template.task_type}.") and template.task_type in ("exploratory", "predictive")


@pytest.mark.parametrize("template", list(TEMPLATES.values()), ids=lambda t: t.id)
def test_a_template_binds_derives_and_perturbs_on_generated_datasets(template):
    bound, produced, differing = 0, set(), set()
    for context in generated():
        for seed in range(2):
            binding = template.bind(context, np.random.default_rng(seed))
            if binding is None:
                continue
            bound += 1
            question = template.question(context, binding)
            assert "{" not in question and "}" not in question
            answer = template.derive(context, binding)
            assert template.derive(context, binding) == answer  # deterministic
            if template.answer == "number":
                assert isinstance(answer, float) and np.isfinite(answer)
            elif "candidates" in binding:
                choices = binding["candidates"].split(", ")
                assert answer in choices and len(choices) >= 3
            else:
                assert answer in (*context.numeric_columns(), *context.levels())
            for kind, perturb in (("diffusion", template.diffusion), ("confusion", template.confusion)):
                for variant in perturb(context, binding):
                    produced.add(kind)
                    if differs(template.derive(context, variant), answer, template.tolerance):
                        differing.add(kind)
    assert bound >= 10, f"{template.id} bound only {bound} times"
    assert differing == produced, f"{template.id}: {produced - differing} never changes the answer"
