"""Descriptive and inferential SDA templates: hand-worked answers on tiny tables, sane on generated data.

The tiny tables are written out below; every expected value is worked by hand (in the comments) or
computed by a different path than the template's (explicit sums instead of scipy, the `statistics`
module instead of numpy), so a wrong derivation fails.
"""

import math
import statistics
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import Simulation, simulate
from stages.generate.sda.instances import COLUMN_SLOTS, LEVEL_SLOTS, candidates
from stages.generate.sda.templates import Context, descriptive, inferential

SCENARIOS = load_scenarios()
TEMPLATES = {t.id: t for t in (*descriptive.TEMPLATES, *inferential.TEMPLATES)}
THREE = next(s for s in SCENARIOS if len(s.groups[s.group]) == 3)
TWO = next((s for s in SCENARIOS if len(s.groups[s.group]) == 2), None)
P, Q, R = (v.name for v in THREE.variables[:3])
L1, L2, L3 = THREE.groups[THREE.group]
T_975_10, T_95_10 = 2.228138852, 1.812461123  # Student t quantiles with 10 degrees of freedom (tables)
Z_975 = statistics.NormalDist().inv_cdf(0.975)


def hand_context(scenario, rows, columns):
    table = pd.DataFrame(rows, columns=[scenario.group, *columns])
    table[columns] = table[columns].astype(float)
    table.insert(0, "sample_id", [f"s{i + 1:04d}" for i in range(len(table))])
    return Context(scenario, Simulation(true={}, table=table, hidden={}))


# level, P, Q, R: P has no ties (ranks 1..12), R is positive and spans decades
ROWS = [(L1, 1, 2, 10), (L1, 2, 4, 20), (L1, 3, 5, 40), (L1, 4, 9, 80),
        (L2, 5, 6, 5), (L2, 6, 3, 6), (L2, 7, 8, 7), (L2, 8.5, 7, 12),
        (L3, 2.5, 1, 3), (L3, 4.5, 2, 9), (L3, 6.5, 2, 27), (L3, 10, 5, 81)]
HAND = hand_context(THREE, ROWS, [P, Q, R])
COLUMN = {name: [row[i] for row in ROWS] for i, name in enumerate([P, Q, R], start=1)}
IN_LEVEL = {(name, level): [row[i] for row in ROWS if row[0] == level]
            for i, name in enumerate([P, Q, R], start=1) for level in (L1, L2, L3)}


# Independent formulas (explicit sums, no scipy)

def pearson(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def ols_slope_se(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxx = sum((a - mx) ** 2 for a in x)
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / sxx
    sse = sum((b - my - slope * (a - mx)) ** 2 for a, b in zip(x, y, strict=True))
    return slope, math.sqrt(sse / (len(x) - 2) / sxx)


def one_way_f(groups):
    values = [v for g in groups for v in g]
    grand, k, n = sum(values) / len(values), len(groups), len(values)
    between = sum(len(g) * (statistics.mean(g) - grand) ** 2 for g in groups)
    within = sum((v - statistics.mean(g)) ** 2 for g in groups for v in g)
    return (between / (k - 1)) / (within / (n - k))


def levene_w(groups, center):
    return one_way_f([[abs(v - center(g)) for v in g] for g in groups])  # W is the F of the deviations


def bartlett_t(groups):
    n, k = sum(len(g) for g in groups), len(groups)
    pooled = sum((len(g) - 1) * statistics.variance(g) for g in groups) / (n - k)
    top = (n - k) * math.log(pooled) - sum((len(g) - 1) * math.log(statistics.variance(g)) for g in groups)
    return top / (1 + (sum(1 / (len(g) - 1) for g in groups) - 1 / (n - k)) / (3 * (k - 1)))


P_GROUPS = [IN_LEVEL[(P, level)] for level in (L1, L2, L3)]
R_GEOMETRIC = (10 * 20 * 40 * 80 * 5 * 6 * 7 * 12 * 3 * 9 * 27 * 81) ** (1 / 12)  # = (640000 * 2520 * 3**10)^(1/12)
SLOPE_QP, SE_QP = ols_slope_se(COLUMN[P], COLUMN[Q])
SLOPE_PQ, SE_PQ = ols_slope_se(COLUMN[Q], COLUMN[P])
R_PQ = pearson(COLUMN[P], COLUMN[Q])

# (template, binding, expected): the binding may carry a perturbation's flag, whose answer is worked too
CASES = [
    # Q in L1 = [2, 4, 5, 9]: median (4 + 5) / 2, mean 20 / 4, squared deviations 9 + 1 + 0 + 16 = 26 over 3
    ("descriptive.group_statistic", {"statistic": "median", "variable": Q, "level": L1}, 4.5),
    ("descriptive.group_statistic", {"statistic": "mean", "variable": Q, "level": L1}, 5.0),
    ("descriptive.group_statistic", {"statistic": "standard deviation", "variable": Q, "level": L1},
     math.sqrt(26 / 3)),
    ("descriptive.group_statistic", {"statistic": "median", "variable": Q, "level": L2}, 6.5),  # [3, 6, 7, 8]
    # P > 4: all of L2 (Q 6, 3, 8, 7) and P 4.5, 6.5, 10 of L3 (Q 2, 2, 5): 33 / 7
    ("descriptive.conditional_mean", {"variable": Q, "condition": P, "threshold": 4.0}, 33 / 7),
    # Q > 6.5: Q 9 (P 4), 8 (P 7), 7 (P 8.5)
    ("descriptive.conditional_mean", {"variable": P, "condition": Q, "threshold": 6.5}, (4 + 7 + 8.5) / 3),
    ("descriptive.share_above", {"variable": P, "threshold": 4.0}, 7 / 12),  # 4 is not above
    ("descriptive.share_above", {"variable": R, "threshold": 30.0}, 3 / 12),  # 40, 80 and 81
    # mean Q by level: 5, 6, 2.5
    ("descriptive.extreme_level", {"variable": Q, "extreme": "highest"}, L2),
    ("descriptive.extreme_level", {"variable": Q, "extreme": "lowest"}, L3),
    # sorted P: 1 2 2.5 3 4 4.5 5 6 6.5 7 8.5 10; 25th at index 2.75 -> 2.875, 75th at 8.25 -> 6.625
    ("descriptive.interquartile_range", {"variable": P}, 3.75),
    # 90th at index 9.9 -> 7 + 0.9 * 1.5 = 8.35; 10th at index 1.1 -> 2 + 0.1 * 0.5 = 2.05
    ("descriptive.decile_ratio", {"variable": P}, 8.35 / 2.05),
    # R in L1 = [10, 20, 40, 80]: mean 37.5, squared deviations 756.25 + 306.25 + 6.25 + 1806.25 = 2875
    ("descriptive.coefficient_of_variation", {"variable": R, "level": L1}, math.sqrt(2875 / 3) / 37.5),
    ("descriptive.coefficient_of_variation", {"variable": R, "level": L1, "dispersion": "variance_to_mean"},
     2875 / 3 / 37.5),
    ("descriptive.coefficient_of_variation", {"variable": R, "level": L1, "dispersion": "mean_to_sd"},
     37.5 / math.sqrt(2875 / 3)),
    ("descriptive.coefficient_of_variation", {"variable": R, "level": L1, "whole_table": 1.0},
     statistics.stdev(COLUMN[R]) / 25.0),
    # Q in L1 = [2, 4, 5, 9]: 25th at index 0.75 -> 3.5, 75th at index 2.25 -> 6
    ("descriptive.subset_percentile", {"percentile": 25.0, "variable": Q, "level": L1}, 3.5),
    ("descriptive.subset_percentile", {"percentile": 75.0, "variable": Q, "level": L1}, 6.0),
    # P in L3 = [2.5, 4.5, 6.5, 10]: 90th at index 2.7 -> 6.5 + 0.7 * 3.5
    ("descriptive.subset_percentile", {"percentile": 90.0, "variable": P, "level": L3}, 8.95),
    ("descriptive.subset_percentile", {"percentile": 25.0, "variable": P, "level": L3, "whole_table": 1.0}, 2.875),
    # L1: deviations of P -1.5 -0.5 0.5 1.5, of Q -3 -1 0 4: Sxy 11, Sxx 5, Syy 26; both increasing -> Spearman 1
    ("descriptive.group_correlation", {"x": P, "y": Q, "level": L1}, 11 / math.sqrt(130)),
    ("descriptive.group_correlation", {"x": P, "y": Q, "level": L1, "spearman": 1.0}, 1.0),
    ("descriptive.group_correlation", {"x": P, "y": Q, "level": L1, "whole_table": 1.0}, R_PQ),
    # R in L3 = [3, 9, 27, 81]: 3 above 5, 1 at or below; over the table R > 5: 4 + 3 + 3
    ("descriptive.count_above_in_level", {"variable": R, "level": L3, "threshold": 5.0}, 3.0),
    ("descriptive.count_above_in_level", {"variable": R, "level": L3, "threshold": 5.0, "at_or_below": 1.0}, 1.0),
    ("descriptive.count_above_in_level", {"variable": R, "level": L3, "threshold": 5.0, "whole_table": 1.0}, 10.0),
    ("descriptive.count_above_in_level", {"variable": R, "level": L2, "threshold": 6.0}, 2.0),  # 7 and 12
    ("descriptive.geometric_mean", {"variable": R}, R_GEOMETRIC),
    ("descriptive.geometric_mean", {"variable": R, "mean": "arithmetic"}, 25.0),  # 300 / 12
    ("descriptive.geometric_mean", {"variable": R, "mean": "log"}, math.log(R_GEOMETRIC)),
    # Q: L1 mean 5 var 26/3, L2 = [6, 3, 8, 7] mean 6 var 14/3; SE^2 = (26/3 + 14/3) / 4 = 10/3
    ("inferential.welch_t", {"variable": Q, "a": L1, "b": L2}, -1 / math.sqrt(10 / 3)),
    ("inferential.welch_t", {"variable": Q, "a": L2, "b": L1}, 1 / math.sqrt(10 / 3)),
    ("inferential.welch_t", {"variable": Q, "a": L1, "b": L2, "pooled": 1.0}, -1 / math.sqrt(10 / 3)),  # equal n
    ("inferential.welch_t", {"variable": Q, "a": L1, "b": L2, "effect_size": 1.0}, -1 / math.sqrt(20 / 3)),
    ("inferential.correlation_interval", {"x": P, "y": Q, "bound": "lower"},
     math.tanh(math.atanh(R_PQ) - Z_975 / 3)),  # sqrt(12 - 3) = 3
    ("inferential.correlation_interval", {"x": P, "y": Q, "bound": "upper"},
     math.tanh(math.atanh(R_PQ) + Z_975 / 3)),
    # P by level: means 2.5, 6.625, 5.875 (grand 5); SSB 38.625, SSW 5 + 6.6875 + 30.6875 = 42.375
    ("inferential.anova_f", {"variable": P}, (38.625 / 2) / (42.375 / 9)),
    # ranks of P: L1 1 2 4 5 (sum 12), L2 7 8 10 11 (36), L3 3 6 9 12 (30); H = 12/156 * 585 - 39
    ("inferential.anova_f", {"variable": P, "ranks": 1.0}, 6.0),
    # P: L1 [1, 2, 3, 4] vs L3 [2.5, 4.5, 6.5, 10]: L1 larger in (3, 2.5) and (4, 2.5) only
    ("inferential.mann_whitney_u", {"variable": P, "a": L1, "b": L3}, 2.0),
    ("inferential.mann_whitney_u", {"variable": P, "a": L3, "b": L1}, 14.0),  # 16 - 2
    ("inferential.mann_whitney_u", {"variable": P, "a": L1, "b": L3, "rank_sum": 1.0}, 12.0),  # ranks 1 2 4 5
    # Q: L1 [2, 4, 5, 9] vs L3 [1, 2, 2, 5]: 2 -> 1 + 2 * 0.5, 4 -> 3, 5 -> 3 + 0.5, 9 -> 4
    ("inferential.mann_whitney_u", {"variable": Q, "a": L1, "b": L3}, 12.5),
    # Q in L1 vs 3: (5 - 3) / (sqrt(26/3) / 2)
    ("inferential.one_sample_t", {"variable": Q, "level": L1, "reference": 3.0}, 2 / math.sqrt(26 / 12)),
    ("inferential.one_sample_t", {"variable": Q, "level": L1, "reference": 3.0, "no_sqrt_n": 1.0},
     2 / math.sqrt(26 / 3)),
    ("inferential.one_sample_t", {"variable": Q, "level": L1, "reference": 3.0, "whole_table": 1.0},
     (4.5 - 3) / (statistics.stdev(COLUMN[Q]) / math.sqrt(12))),  # mean Q 54 / 12
    # R median (10 + 12) / 2 = 11; high: L1 3 of 4, L2 1, L3 2; every expected count 2
    ("inferential.median_split_chi_square", {"variable": R}, 2.0),
    ("inferential.median_split_chi_square", {"variable": R, "likelihood_ratio": 1.0},
     12 * math.log(1.5) - 4 * math.log(2)),  # 2 * (2 * ln(1/2) + 6 * ln(3/2))
    # R mean 25; high: L1 2, L2 0, L3 2; expected 8/3 low and 4/3 high per level: 0.5 + 2 + 0.5
    ("inferential.median_split_chi_square", {"variable": R, "mean_split": 1.0}, 3.0),
    ("inferential.slope_margin", {"x": P, "y": Q}, T_975_10 * SE_QP),
    ("inferential.slope_margin", {"x": Q, "y": P}, T_975_10 * SE_PQ),
    ("inferential.slope_margin", {"x": P, "y": Q, "one_sided": 1.0}, T_95_10 * SE_QP),
    ("inferential.slope_margin", {"x": P, "y": Q, "standard_error": 1.0}, SE_QP),
    # |P - level mean|: L1 mean 1, L2 1.125, L3 2.375 (grand 1.5); between 4.625, within 1 + 1.625 + 8.125
    ("inferential.levene_w", {"variable": P}, 4.5 * 4.625 / 10.75),
    ("inferential.levene_w", {"variable": P, "center": "median"}, levene_w(P_GROUPS, statistics.median)),
    ("inferential.levene_w", {"variable": P, "bartlett": 1.0}, bartlett_t(P_GROUPS)),
    ("inferential.kruskal_h", {"variable": P}, 6.0),
    ("inferential.kruskal_h", {"variable": P, "anova": "values"}, one_way_f(P_GROUPS)),
    # the F of the ranks above: SSB 4 * (3.5^2 + 2.5^2 + 1^2) = 78, SSW 10 + 10 + 45 = 65
    ("inferential.kruskal_h", {"variable": P, "anova": "ranks"}, (78 / 2) / (65 / 9)),
]


@pytest.mark.parametrize(("template_id", "binding", "expected"), CASES,
                         ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)])
def test_a_template_derives_the_hand_worked_answer(template_id, binding, expected):
    answer = TEMPLATES[template_id].derive(HAND, binding)
    if isinstance(expected, str):
        assert answer == expected
    else:
        assert answer == pytest.approx(expected, rel=1e-8, abs=1e-12)


def test_the_independent_formulas_agree_with_the_worked_numbers():
    assert one_way_f(P_GROUPS) == pytest.approx(38.625 * 9 / 84.75)
    assert levene_w(P_GROUPS, statistics.mean) == pytest.approx(20.8125 / 10.75)
    assert R_GEOMETRIC == pytest.approx((640000 * 2520 * 3 ** 10) ** (1 / 12))
    assert statistics.stdev(COLUMN[R]) ** 2 == pytest.approx(sum((r - 25) ** 2 for r in COLUMN[R]) / 11)


def test_every_descriptive_and_inferential_template_has_a_hand_worked_case():
    assert {template_id for template_id, _, _ in CASES} == set(TEMPLATES)
    assert len(descriptive.TEMPLATES) >= 6 and len(inferential.TEMPLATES) >= 6
    assert len(TEMPLATES) == len(descriptive.TEMPLATES) + len(inferential.TEMPLATES)  # ids unique
    assert all(t.id.startswith(f"{t.task_type}.") for t in TEMPLATES.values())


@pytest.mark.skipif(TWO is None, reason="no scenario with a two-level group")
def test_the_median_split_on_a_two_by_two_table_and_its_yates_confusion():
    variable = TWO.variables[0].name
    m1, m2 = TWO.groups[TWO.group]
    rows = [(m1, v) for v in (1, 2, 3, 4, 8, 9)] + [(m2, v) for v in (5, 6, 7, 10, 11, 12)]
    context = hand_context(TWO, rows, [variable])
    template = TEMPLATES["inferential.median_split_chi_square"]
    # median 6.5: m1 4 low 2 high, m2 2 low 4 high, every expected count 3
    assert template.derive(context, {"variable": variable}) == pytest.approx(4 / 3)
    assert template.derive(context, {"variable": variable, "yates": 1.0}) == pytest.approx(4 * 0.5 ** 2 / 3)
    assert template.derive(context, {"variable": variable, "likelihood_ratio": 1.0}) == pytest.approx(
        16 * math.log(4 / 3) + 8 * math.log(2 / 3))
    assert {"yates": 1.0}.items() <= template.confusion(context, {"variable": variable})[-1].items()
    assert not any(b.get("yates") for b in template.confusion(HAND, {"variable": P}))  # 3 x 2: no Yates


def test_the_question_texts_fill_every_placeholder_with_units_and_levels():
    text = TEMPLATES["descriptive.count_above_in_level"].question(HAND, {"variable": R, "level": L3,
                                                                         "threshold": 5.0})
    unit = THREE.variable(R).unit
    assert text == f"How many of the samples whose {THREE.group} is {L3} have {R} strictly above 5 {unit}?"
    text = TEMPLATES["inferential.slope_margin"].question(HAND, {"x": P, "y": Q})
    assert f"in {THREE.variable(Q).unit} per {THREE.variable(P).unit}" in text and "{" not in text


# On generated datasets: every third scenario, and one with a two-level group (a 2 x 2 table)

GENERATED = [*SCENARIOS[::3], *([TWO] if TWO is not None and TWO not in SCENARIOS[::3] else [])]

@pytest.fixture(scope="module")
def contexts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [Context(scenario, simulate(scenario, 400, 3)) for scenario in GENERATED]


NO_CONFUSION = {"descriptive.interquartile_range", "descriptive.decile_ratio"}  # older templates: diffusion only


def _signature(binding, variant):
    """What a perturbation changed: the keys it edits, and the value of a flag it adds (a test variant)."""
    changed = sorted(key for key in variant if variant[key] != binding.get(key))
    return tuple((key, "*" if key in binding else variant[key]) for key in changed)


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_on_generated_data_answers_are_finite_and_every_perturbation_changes_some_answer(template_id, contexts):
    template = TEMPLATES[template_id]
    bound, changed, seen, distinct = 0, Counter(), Counter(), Counter()
    for context in contexts:
        for seed in range(5):
            binding = template.bind(context, np.random.default_rng(seed))
            if binding is None:
                continue
            bound += 1
            assert all(binding[slot] in context.table.columns for slot in COLUMN_SLOTS if slot in binding)
            assert all(binding[slot] in context.levels() for slot in LEVEL_SLOTS if slot in binding)
            answer = template.derive(context, binding)
            assert answer == template.derive(context, dict(binding))  # deterministic
            if template.answer == "entity":
                assert answer in context.levels() or answer in context.numeric_columns()
            else:
                assert isinstance(answer, float) and math.isfinite(answer), (context.scenario.id, binding)
            for kind, perturb in (("diffusion", template.diffusion), ("confusion", template.confusion)):
                for variant in perturb(context, binding):
                    other = template.derive(context, variant)
                    signature = (kind, _signature(binding, variant))
                    seen[signature] += 1
                    if other != answer and not (isinstance(other, float) and math.isnan(other)):
                        changed[signature] += 1
                    if isinstance(answer, str) or abs(other - answer) > 2 * template.tolerance * max(
                            abs(answer), abs(other)):
                        distinct[kind] += other != answer
    assert bound >= len(contexts) * 3, "the template binds on too few generated datasets"
    assert {kind for kind, _ in seen} >= {"diffusion", "confusion"} or template_id in NO_CONFUSION
    unchanged = [signature for signature in seen if not changed[signature]]
    assert not unchanged, f"perturbations that never change the answer: {unchanged}"
    for kind in {kind for kind, _ in seen}:
        assert distinct[kind], f"no {kind} answer ever differs from the answer beyond the tolerance"


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_the_verifier_accepts_instances_of_every_template(template_id, contexts):
    found = []
    for context in contexts[::3]:
        found += candidates(TEMPLATES[template_id], context, seed=11, attempts=4, rejected=Counter())
    assert found, f"{template_id} yields no verified instance"
    for instance in found:
        assert instance["option_perturbations"].count(None) == 1
        assert len(set(map(str, instance["options"]))) == len(instance["options"]) in (3, 4)
        assert "{" not in instance["question"]
