"""Causal and mechanistic SDA templates: every answer re-derived by an independent path.

Causal answers are checked analytically on purely linear structural models (the weights and the
standardizing statistics the simulation keeps as hidden metadata give every interventional mean
exactly), or against the graph by enumerating its directed paths; mechanistic answers against
closed forms, other fitting routines, or the true constants of low-noise datasets. Finally every
template binds and derives on the generated scenarios, and its confusion perturbation is a
different answer for at least one binding.
"""

import math
import warnings
from collections import Counter

import numpy as np
import pytest
from scipy import optimize, stats

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import SPREAD_SIGMAS, simulate
from stages.generate.sda.instances import candidates
from stages.generate.sda.scenario import Scenario
from stages.generate.sda.templates import Context, causal, mechanistic

TEMPLATES = {t.id: t for t in (*causal.TEMPLATES, *mechanistic.TEMPLATES)}
NEW = ("causal.mediator", "causal.strongest_cause", "causal.controlled_direct_effect", "causal.mediated_share",
       "causal.do_spread", "mechanistic.fitted_constant", "mechanistic.half_saturation", "mechanistic.elasticity",
       "mechanistic.direct_input", "mechanistic.dominant_input", "mechanistic.activation_energy")
# the linear structural model: weights of each causal mechanism
W_AB, W_DB, W_BC, W_AC, W_DE = 0.6, 0.3, 0.5, 0.4, 0.7


def _variable(name: str, role: str, low: float, high: float, unit: str = "V") -> dict:
    return {"name": name, "role": role, "unit": unit, "low": low, "high": high, "description": name}


def _scenario(variables: list[dict], mechanisms: list[dict], scenario_id: str = "synthetic") -> Scenario:
    return Scenario.model_validate({
        "id": scenario_id, "domain": "physics", "title": "a synthetic test scenario", "unit_of_observation": "a run",
        "groups": {"batch": ["first", "second"]}, "variables": variables, "mechanisms": mechanisms,
        "distractors": [_variable("bench_number", "source", 1, 40)]})


def _context(scenario: Scenario, n_rows: int = 400, seed: int = 3) -> Context:
    return Context(scenario, simulate(scenario, n_rows, seed))


@pytest.fixture(scope="module")
def linear() -> Context:
    """a -> b <- d, b -> c, a -> c, d -> e: every mechanism causal (an internally standardized linear SCM)."""
    return _context(_scenario(
        [_variable("a", "source", 0, 10), _variable("d", "source", 0, 10), _variable("b", "internal", 0, 60),
         _variable("c", "target", 0, 30), _variable("e", "target", 0, 5)],
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
    shifts = causal._shifts(linear, "c", sorted(per_sd))
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
    return [_context(scenario) for scenario in load_scenarios()]


def _bindings(template_id: str, contexts: list[Context], draws: int = 3) -> list[tuple[Context, dict]]:
    template = TEMPLATES[template_id]
    found = []
    for context in contexts:
        seen = set()
        for seed in range(draws):
            binding = template.bind(context, np.random.default_rng(seed))
            if binding is not None and repr(sorted(binding.items())) not in seen:
                seen.add(repr(sorted(binding.items())))
                found.append((context, binding))
    return found


def test_mediator_and_non_cause_agree_with_enumerated_paths(generated: list[Context]):
    checked = 0
    for context, binding in _bindings("causal.mediator", generated):
        paths = _paths(context.simulation.hidden["edges"], binding["cause"], binding["effect"])
        on_every = set.intersection(*(set(p[1:-1]) for p in paths))
        expected = [name for name in binding["candidates"].split(", ") if name in on_every]
        assert [TEMPLATES["causal.mediator"].derive(context, binding)] == expected
        checked += 1
    for context, binding in _bindings("causal.non_cause", generated):
        edges = context.simulation.hidden["edges"]
        influencing = [name for name in binding["candidates"].split(", ") if _paths(edges, name, binding["effect"])]
        answer = TEMPLATES["causal.non_cause"].derive(context, binding)
        assert answer not in influencing and len(influencing) == 3
        checked += 1
    assert checked > 50


# ----------------------------------------------------------------------------------------- mechanistic


def test_power_law_and_exponential_rate_agree_with_linregress(generated: list[Context]):
    for context, binding in _bindings("mechanistic.power_law_exponent", generated[:10], 2):
        x, y = context.table[binding["x"]], context.table[binding["y"]]
        assert TEMPLATES["mechanistic.power_law_exponent"].derive(context, binding) == \
            pytest.approx(stats.linregress(np.log(x), np.log(y)).slope, rel=1e-9)
        assert TEMPLATES["mechanistic.exponential_rate"].derive(context, binding) == \
            pytest.approx(stats.linregress(x, np.log(y)).slope, rel=1e-9)


def _low_noise(scenario: Scenario) -> Scenario:
    return scenario.model_copy(update={"mechanisms": tuple(m.model_copy(update={"noise": 0.0})
                                                           for m in scenario.mechanisms)})


def test_a_fitted_constant_recovers_the_true_constant_on_low_noise_datasets():
    checked = 0
    for scenario in load_scenarios():
        context = _context(_low_noise(scenario))
        for output, constant in mechanistic.equations._askable_constants(context):
            true = scenario.mechanism(output).constants[constant]
            answer = TEMPLATES["mechanistic.fitted_constant"].derive(context, {"output": output, "constant": constant})
            assert answer == pytest.approx(true, rel=0.03), (scenario.id, output, constant)
            checked += 1
    assert checked >= 20


def test_a_constant_entering_linearly_is_the_closed_form_least_squares_ratio():
    context = _context(_scenario(
        [_variable("x1", "source", 1, 5), _variable("x2", "source", 2, 8), _variable("y", "target", 0, 150)],
        [{"output": "y", "expression": "k * x1 * x2 + offset", "constants": {"k": 2.5, "offset": 3.0},
          "noise": 0.1}]))
    table = context.table
    basis = table["x1"] * table["x2"]
    closed = float((basis * (table["y"] - 3.0)).sum() / (basis ** 2).sum())
    assert ("y", "k") in mechanistic.equations._askable_constants(context)
    template = TEMPLATES["mechanistic.fitted_constant"]
    bindings = [template.bind(context, np.random.default_rng(seed)) for seed in range(8)]
    binding = next(b for b in bindings if b["constant"] == "k")
    assert binding["equation"] == "y = k * x1 * x2 + 3.0"
    assert TEMPLATES["mechanistic.fitted_constant"].derive(context, binding) == pytest.approx(closed, rel=1e-8)
    # a unit slip: the written offset taken as 30
    slipped = float((basis * (table["y"] - 30.0)).sum() / (basis ** 2).sum())
    misread = TEMPLATES["mechanistic.fitted_constant"].confusion(context, binding)
    assert [variant.get("slip") for variant in misread] == ["offset", None]
    assert TEMPLATES["mechanistic.fitted_constant"].derive(context, misread[0]) == pytest.approx(slipped, rel=1e-8)
    # the confusion flips the operator next to k: y = k / x1 * x2 + 3, whose least-squares k is closed-form too
    flipped_basis = table["x2"] / table["x1"]
    flipped = float((flipped_basis * (table["y"] - 3.0)).sum() / (flipped_basis ** 2).sum())
    assert TEMPLATES["mechanistic.fitted_constant"].derive(context, binding | {"flip": 1.0}) == \
        pytest.approx(flipped, rel=1e-8)


def test_half_saturation_matches_an_independent_fit_and_the_true_constant():
    context = _context(_scenario(
        [_variable("substrate", "source", 0.5, 20), _variable("rate", "target", 0, 8)],
        [{"output": "rate", "expression": "top * substrate / (k_half + substrate)",
          "constants": {"top": 8.0, "k_half": 3.0}, "noise": 0.005}]))
    binding = TEMPLATES["mechanistic.half_saturation"].bind(context, np.random.default_rng(0))
    assert binding == {"x": "substrate", "y": "rate"}
    answer = TEMPLATES["mechanistic.half_saturation"].derive(context, binding)
    x, y = context.table["substrate"].to_numpy(), context.table["rate"].to_numpy()
    (_, half), _ = optimize.curve_fit(lambda v, top, k: top * v / (k + v), x, y, p0=[1.0, 10.0], method="trf")
    assert answer == pytest.approx(half, rel=1e-5)
    assert answer == pytest.approx(3.0, rel=0.02)
    slope, intercept, *_ = stats.linregress(1 / x, 1 / y)
    assert TEMPLATES["mechanistic.half_saturation"].derive(context, binding | {"reciprocal": 1.0}) == \
        pytest.approx(slope / intercept, rel=1e-9)


def test_elasticity_of_a_saturating_exponential_mechanism_is_analytic():
    context = _context(_scenario(
        [_variable("soil_moisture", "source", 5, 45), _variable("vpd", "source", 0.3, 3.5),
         _variable("conductance", "target", 0, 0.7)],
        [{"output": "conductance", "expression": "gmax * soil_moisture / (soil_moisture + k_sm) * exp(-b * vpd)",
          "constants": {"gmax": 0.9, "k_sm": 12.0, "b": 0.35}}]))
    sm, vpd = context.table["soil_moisture"].median(), context.table["vpd"].median()
    template = TEMPLATES["mechanistic.elasticity"]
    base = {"output": "conductance"}
    assert template.derive(context, base | {"x": "soil_moisture"}) == pytest.approx(12.0 / (sm + 12.0), rel=1e-6)
    assert template.derive(context, base | {"x": "vpd"}) == pytest.approx(-0.35 * vpd, rel=1e-6)
    value = 0.9 * sm / (sm + 12.0) * math.exp(-0.35 * vpd)
    assert template.derive(context, base | {"x": "vpd", "unscaled": 1.0}) == pytest.approx(-0.35 * value, rel=1e-6)
    logs = np.log(context.table[["vpd", "conductance"]])
    assert template.derive(context, base | {"x": "vpd", "marginal": 1.0}) == \
        pytest.approx(stats.linregress(logs["vpd"], logs["conductance"]).slope, rel=1e-9)
    binding = template.bind(context, np.random.default_rng(1))
    assert binding["equation"] == "conductance = 0.9 * soil_moisture / (soil_moisture + 12.0) * exp(-0.35 * vpd)"


def test_dominant_input_is_the_largest_median_replacement_error():
    context = _context(_scenario(
        [_variable("a", "source", 0, 10), _variable("b", "source", 0, 10), _variable("c", "source", 0, 10),
         _variable("y", "target", 0, 60)],
        [{"output": "y", "expression": "3.0 * a + 0.2 * b + c ** 2 / 10", "noise": 0.02}]))
    table = context.table
    predicted = 3.0 * table["a"] + 0.2 * table["b"] + table["c"] ** 2 / 10
    expected = {}
    for name in ("a", "b", "c"):
        replaced = table.assign(**{name: table[name].median()})
        errors = 3.0 * replaced["a"] + 0.2 * replaced["b"] + replaced["c"] ** 2 / 10 - table["y"]
        expected[name] = float(np.sqrt(np.mean(errors ** 2)))
    assert mechanistic.equations._median_errors(context, "y", ["a", "b", "c"]) == pytest.approx(expected, rel=1e-9)
    assert expected["a"] > expected["c"] > expected["b"]
    binding = TEMPLATES["mechanistic.dominant_input"].bind(context, np.random.default_rng(0))
    assert binding["candidates"] == "a, b, c"
    assert TEMPLATES["mechanistic.dominant_input"].derive(context, binding) == "a"
    assert np.sqrt(np.mean((predicted - table["y"]) ** 2)) < expected["b"]


def test_activation_energy_recovers_the_true_one_and_matches_linregress():
    context = _context(_scenario(
        [_variable("temperature", "source", 300, 380, "K"), _variable("rate", "target", 0, 0.2, "1/min")],
        [{"output": "rate", "expression": "a * exp(-ea / (8.314 * temperature))",
          "constants": {"a": 3.0e6, "ea": 55000.0}, "noise": 0.001}]))
    binding = TEMPLATES["mechanistic.activation_energy"].bind(context, np.random.default_rng(0))
    assert binding == {"x": "temperature", "y": "rate"}
    answer = TEMPLATES["mechanistic.activation_energy"].derive(context, binding)
    assert answer == pytest.approx(55.0, rel=0.01)
    fit = stats.linregress(1 / context.table["temperature"], np.log(context.table["rate"]))
    assert answer == pytest.approx(-fit.slope * 8.314 / 1000, rel=1e-9)
    assert TEMPLATES["mechanistic.activation_energy"].derive(context, binding | {"log10": 1.0}) == \
        pytest.approx(answer / math.log(10), rel=1e-9)


def test_activation_energy_converts_celsius_to_kelvin():
    context = _context(_scenario(
        [_variable("water_temperature", "source", 5, 60, "degC"), _variable("rate", "target", 0, 2, "1/h")],
        [{"output": "rate", "expression": "a * exp(-ea / (8.314 * (water_temperature + 273.15)))",
          "constants": {"a": 1.0e7, "ea": 40000.0}, "noise": 0.001}]))
    binding = {"x": "water_temperature", "y": "rate"}
    assert TEMPLATES["mechanistic.activation_energy"].derive(context, binding) == pytest.approx(40.0, rel=0.01)
    slips = mechanistic.forms._arrhenius_slips(context, binding)
    assert [s.get("celsius") for s in slips] == [None, 1.0]
    fit = stats.linregress(1 / context.table["water_temperature"], np.log(context.table["rate"]))
    assert TEMPLATES["mechanistic.activation_energy"].derive(context, slips[1]) == \
        pytest.approx(-fit.slope * 8.314 / 1000, rel=1e-9)


def test_direct_input_is_the_only_candidate_with_an_edge_into_the_output(generated: list[Context]):
    checked = 0
    for context, binding in _bindings("mechanistic.direct_input", generated):
        edges = {tuple(edge) for edge in context.simulation.hidden["edges"]}
        direct = [name for name in binding["candidates"].split(", ") if (name, binding["output"]) in edges]
        assert [TEMPLATES["mechanistic.direct_input"].derive(context, binding)] == direct
        assert len(binding["candidates"].split(", ")) == 4
        checked += 1
    assert checked > 50


# -------------------------------------------------------------------------------- on generated datasets


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_every_template_binds_derives_and_has_a_confusion_that_differs(template_id: str, generated: list[Context]):
    template = TEMPLATES[template_id]
    found = _bindings(template_id, generated, 2)
    assert len(found) >= 5, template_id
    differs = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for context, binding in found:
            answer = template.derive(context, binding)
            assert template.derive(context, binding) == answer  # deterministic
            if template.answer == "number":
                assert isinstance(answer, float) and math.isfinite(answer), (context.scenario.id, binding)
            else:
                assert answer in binding["candidates"].split(", "), (context.scenario.id, binding)
            for variant in template.confusion(context, binding):
                other = template.derive(context, variant)
                if isinstance(answer, str):
                    differs += other != answer
                else:
                    differs += math.isfinite(other) and abs(other - answer) > template.tolerance * abs(answer)
    assert differs >= 1, template_id


@pytest.mark.parametrize("template_id", sorted(TEMPLATES))
def test_the_verifier_accepts_instances_of_every_template(template_id: str, generated: list[Context]):
    found = []
    for context in generated[::3]:
        found += candidates(TEMPLATES[template_id], context, seed=7, attempts=3, rejected=Counter())
    assert found, f"{template_id} yields no verified instance"
    for instance in found:
        assert instance["option_perturbations"].count(None) == 1 and len(set(map(str, instance["options"]))) == 4
        assert "{" not in instance["question"] and instance["template"] == template_id


def test_there_are_at_least_six_templates_of_each_kind_with_unique_ids():
    ids = [t.id for t in (*causal.TEMPLATES, *mechanistic.TEMPLATES)]
    assert len(set(ids)) == len(ids) and set(NEW) <= set(ids)
    assert len(causal.TEMPLATES) >= 6 and len(mechanistic.TEMPLATES) >= 6
    assert all(t.task_type == t.id.split(".")[0] for t in TEMPLATES.values())
