"""Causal SDA templates: every answer re-derived by an independent path.

Answers are checked analytically on purely linear structural models (the weights and the standardizing
statistics the simulation keeps as hidden metadata give every interventional mean exactly), or against the
graph by enumerating its directed paths. Finally every causal template binds and derives on the generated
scenarios, and its confusion perturbation is a different answer for at least one binding.
"""


import numpy as np
import pytest
from scibench_testing.sda_contexts import (
    generated_contexts,
    simulated_context,
    synthetic_scenario,
    synthetic_variable,
    template_bindings,
)
from scipy import stats

from stages.generate.sda.dataset import SPREAD_SIGMAS
from stages.generate.sda.templates import Context, causal, mechanistic

TEMPLATES = {t.id: t for t in causal.TEMPLATES}
NEW = ("causal.mediator", "causal.strongest_cause", "causal.controlled_direct_effect", "causal.mediated_share",
       "causal.do_spread")
# the linear structural model: weights of each causal mechanism
W_AB, W_DB, W_BC, W_AC, W_DE = 0.6, 0.3, 0.5, 0.4, 0.7


@pytest.fixture(scope="module")
def linear() -> Context:
    """a -> b <- d, b -> c, a -> c, d -> e: every mechanism causal (an internally standardized linear SCM)."""
    return simulated_context(synthetic_scenario(
        [synthetic_variable("a", "source", 0, 10), synthetic_variable("d", "source", 0, 10),
         synthetic_variable("b", "internal", 0, 60), synthetic_variable("c", "target", 0, 30),
         synthetic_variable("e", "target", 0, 5)],
        [{"output": "b", "kind": "causal", "weights": {"a": W_AB, "d": W_DB}},
         {"output": "c", "kind": "causal", "weights": {"b": W_BC, "a": W_AC}},
         {"output": "e", "kind": "causal", "weights": {"d": W_DE}}], "linear_chain"))


def _z_shift(context: Context, name: str, value: float) -> float:
    """How far `value` lies from the observational mean of `name`, in its observational SDs (np.std)."""
    true = context.simulation.true[name]
    return (value - true.mean()) / true.std()


def _to_units(context: Context, name: str, raw_shift: float) -> float:
    """A shift of a causal variable's raw structural sum, in the variable's units."""
    variable = context.scenario.variable(name)
    sd = context.simulation.hidden["standardizing"][name][1]
    return raw_shift / sd * (variable.high - variable.low) / SPREAD_SIGMAS


def _total_a_on_c(context: Context) -> float:
    """The raw shift of c per SD of a: directly, and through b (b's own SD being its raw sd)."""
    return W_AC + W_BC * W_AB / context.simulation.hidden["standardizing"]["b"][1]


# ---------------------------------------------------------------------------------------------- causal


def test_do_mean_on_a_linear_scm_is_the_observed_mean_plus_the_path_weights(linear: Context):
    table = linear.table
    for value in (1.5, 8.25):
        answer = TEMPLATES["causal.do_mean"].derive(linear, {"cause": "a", "effect": "c", "value": value})
        expected = table["c"].mean() + _to_units(linear, "c", _total_a_on_c(linear) * _z_shift(linear, "a", value))
        assert answer == pytest.approx(expected, rel=1e-7, abs=1e-6)
        via_b = table["b"].mean() + _to_units(linear, "b", W_AB * _z_shift(linear, "a", value))
        assert TEMPLATES["causal.do_mean"].derive(linear, {"cause": "a", "effect": "b", "value": value}) == \
            pytest.approx(via_b, rel=1e-7, abs=1e-6)


def test_an_intervention_on_a_non_ancestor_leaves_the_effect_mean_exactly_unchanged(linear: Context):
    for cause in ("e", "c"):
        assert TEMPLATES["causal.do_mean"].derive(linear, {"cause": cause, "effect": "b", "value": 3.0}) == \
            linear.table["b"].mean()
    assert TEMPLATES["causal.do_mean"].derive(linear, {"cause": "e", "effect": "c", "value": 0.1}) == \
        linear.table["c"].mean()


def test_contrast_and_its_naive_slope_on_a_linear_scm(linear: Context):
    binding = {"cause": "a", "effect": "c", "low": 2.0, "high": 7.0}
    expected = _to_units(linear, "c", _total_a_on_c(linear) * 5.0 / linear.simulation.true["a"].std())
    assert TEMPLATES["causal.contrast"].derive(linear, binding) == pytest.approx(expected, rel=1e-7)
    naive = stats.linregress(linear.table["a"], linear.table["c"]).slope * 5.0
    assert TEMPLATES["causal.contrast"].derive(linear, binding | {"naive": 1.0}) == pytest.approx(naive, rel=1e-9)


def test_controlled_direct_effect_and_mediated_share_on_a_linear_scm(linear: Context):
    binding = {"cause": "a", "condition": "b", "effect": "c", "low": 2.0, "high": 7.0, "value": 30.0}
    per_sd_a = 5.0 / linear.simulation.true["a"].std()
    direct = _to_units(linear, "c", W_AC * per_sd_a)
    total = _to_units(linear, "c", _total_a_on_c(linear) * per_sd_a)
    assert TEMPLATES["causal.controlled_direct_effect"].derive(linear, binding) == pytest.approx(direct, rel=1e-7)
    assert TEMPLATES["causal.controlled_direct_effect"].derive(linear, binding | {"unheld": 1.0}) == \
        pytest.approx(total, rel=1e-7)
    assert TEMPLATES["causal.mediated_share"].derive(linear, binding) == pytest.approx(1 - direct / total, rel=1e-6)
    # the held value does not matter in a linear model, and the share through b is about 0.4 here
    assert TEMPLATES["causal.mediated_share"].derive(linear, binding | {"value": 10.0}) == \
        pytest.approx(1 - direct / total, rel=1e-6)
    # the naive difference method: 1 - (coefficient of a given b) / (coefficient of a alone), by statsmodels-free OLS
    table = linear.table
    design = np.column_stack([np.ones(len(table)), table["a"], table["b"]])
    adjusted = np.linalg.lstsq(design, table["c"], rcond=None)[0][1]
    naive = 1 - adjusted / stats.linregress(table["a"], table["c"]).slope
    assert TEMPLATES["causal.mediated_share"].derive(linear, binding | {"naive": 1.0}) == pytest.approx(naive, rel=1e-9)


def test_the_triple_of_the_linear_scm_is_bound_with_quartiles_and_the_median(linear: Context):
    found = {tuple(b[k] for k in ("cause", "condition", "effect")): b for b in
             (TEMPLATES["causal.controlled_direct_effect"].bind(linear, np.random.default_rng(s)) for s in range(30))
             if b is not None}
    assert set(found) == {("a", "b", "c")}  # d reaches c only through b: no path avoids the mediator
    binding = found[("a", "b", "c")]
    assert binding["low"] == float(f"{linear.table['a'].quantile(0.25):.4g}")
    assert binding["value"] == float(f"{linear.table['b'].median():.4g}")


def test_do_spread_on_a_linear_scm_is_the_spread_with_b_s_contribution_removed(linear: Context):
    answer = TEMPLATES["causal.do_spread"].derive(linear, {"cause": "b", "effect": "c", "value": 25.0})
    z_b = _z_shift(linear, "b", linear.simulation.true["b"])
    expected = np.std(linear.table["c"] - _to_units(linear, "c", W_BC * z_b), ddof=1)
    assert answer == pytest.approx(expected, rel=1e-6)
    unset = TEMPLATES["causal.do_spread"].derive(linear, {"cause": "b", "effect": "c", "value": 25.0, "unset": 1.0})
    assert unset == pytest.approx(np.std(linear.table["c"], ddof=1), rel=1e-12) and unset > answer * 1.2


def test_strongest_cause_on_a_linear_scm_follows_the_total_path_weights(linear: Context):
    table, hidden = linear.table, linear.simulation.hidden
    sd_b = hidden["standardizing"]["b"][1]
    per_sd = {"a": _total_a_on_c(linear), "d": W_BC * W_DB / sd_b, "b": W_BC, "e": 0.0}
    expected = {}
    for name, weight in per_sd.items():
        iqr = table[name].quantile(0.75) - table[name].quantile(0.25)
        expected[name] = abs(_to_units(linear, "c", weight * iqr / linear.simulation.true[name].std()))
    shifts = causal.structure._shifts(linear, "c", sorted(per_sd))
    assert shifts == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert shifts["e"] == 0.0
    binding = {"effect": "c", "candidates": "a, b, d, e"}
    assert TEMPLATES["causal.strongest_cause"].derive(linear, binding) == max(expected, key=expected.get)


def _paths(edges: list, start: str, end: str) -> list[list[str]]:
    """Every directed path from start to end, by depth-first enumeration of the edge list."""
    children: dict[str, list[str]] = {}
    for parent, child in edges:
        children.setdefault(parent, []).append(child)
    found, stack = [], [[start]]
    while stack:
        path = stack.pop()
        for child in children.get(path[-1], []):
            (found if child == end else stack).append(path + [child])
    return found


def test_mediator_on_the_linear_scm(linear: Context):
    binding = {"cause": "d", "effect": "c", "candidates": "a, b, bench_number, e"}
    assert TEMPLATES["causal.mediator"].derive(linear, binding) == "b"


@pytest.fixture(scope="module")
def generated() -> list[Context]:
    return generated_contexts()


def test_mediator_and_non_cause_agree_with_enumerated_paths(generated: list[Context]):
    checked = 0
    for context, binding in template_bindings(TEMPLATES["causal.mediator"], generated):
        paths = _paths(context.simulation.hidden["edges"], binding["cause"], binding["effect"])
        on_every = set.intersection(*(set(p[1:-1]) for p in paths))
        expected = [name for name in binding["candidates"].split(", ") if name in on_every]
        assert [TEMPLATES["causal.mediator"].derive(context, binding)] == expected
        checked += 1
    for context, binding in template_bindings(TEMPLATES["causal.non_cause"], generated):
        edges = context.simulation.hidden["edges"]
        influencing = [name for name in binding["candidates"].split(", ") if _paths(edges, name, binding["effect"])]
        answer = TEMPLATES["causal.non_cause"].derive(context, binding)
        assert answer not in influencing and len(influencing) == 3
        checked += 1
    assert checked > 50


# -------------------------------------------------------------------------------- on generated datasets


def test_there_are_at_least_six_causal_templates_with_unique_ids():
    ids = [t.id for t in causal.TEMPLATES]
    assert len(set(ids)) == len(ids) and set(NEW) <= set(ids)
    assert not set(ids) & {t.id for t in mechanistic.TEMPLATES}  # unique across both kinds too
    assert len(causal.TEMPLATES) >= 6
    assert all(t.task_type == t.id.split(".")[0] for t in TEMPLATES.values())
