"""Mechanistic SDA templates: every answer re-derived by an independent path.

Answers are checked against closed forms, other fitting routines, or the true constants of low-noise
datasets. Finally every mechanistic template binds and derives on the generated scenarios, and its
confusion perturbation is a different answer for at least one binding.
"""

import math

import numpy as np
import pytest
from scibench_testing.sda_contexts import (
    generated_contexts,
    low_noise,
    simulated_context,
    synthetic_scenario,
    synthetic_variable,
    template_bindings,
)
from scipy import optimize, stats

from stages.generate.sda import load_scenarios
from stages.generate.sda.templates import Context, mechanistic

TEMPLATES = {t.id: t for t in mechanistic.TEMPLATES}
NEW = ("mechanistic.fitted_constant", "mechanistic.half_saturation", "mechanistic.elasticity",
       "mechanistic.direct_input", "mechanistic.dominant_input", "mechanistic.activation_energy")


@pytest.fixture(scope="module")
def generated() -> list[Context]:
    return generated_contexts()


def test_power_law_and_exponential_rate_agree_with_linregress(generated: list[Context]):
    for context, binding in template_bindings(TEMPLATES["mechanistic.power_law_exponent"], generated[:10], 2):
        x, y = context.table[binding["x"]], context.table[binding["y"]]
        assert TEMPLATES["mechanistic.power_law_exponent"].derive(context, binding) == \
            pytest.approx(stats.linregress(np.log(x), np.log(y)).slope, rel=1e-9)
        assert TEMPLATES["mechanistic.exponential_rate"].derive(context, binding) == \
            pytest.approx(stats.linregress(x, np.log(y)).slope, rel=1e-9)


def test_a_fitted_constant_recovers_the_true_constant_on_low_noise_datasets():
    checked = 0
    for scenario in load_scenarios():
        context = simulated_context(low_noise(scenario))
        for output, constant in mechanistic.equations._askable_constants(context):
            true = scenario.mechanism(output).constants[constant]
            answer = TEMPLATES["mechanistic.fitted_constant"].derive(context, {"output": output, "constant": constant})
            assert answer == pytest.approx(true, rel=0.03), (scenario.id, output, constant)
            checked += 1
    assert checked >= 20


def test_a_constant_entering_linearly_is_the_closed_form_least_squares_ratio():
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("x1", "source", 1, 5), synthetic_variable("x2", "source", 2, 8),
         synthetic_variable("y", "target", 0, 150)],
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
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("substrate", "source", 0.5, 20), synthetic_variable("rate", "target", 0, 8)],
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
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("soil_moisture", "source", 5, 45), synthetic_variable("vpd", "source", 0.3, 3.5),
         synthetic_variable("conductance", "target", 0, 0.7)],
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
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("a", "source", 0, 10), synthetic_variable("b", "source", 0, 10),
         synthetic_variable("c", "source", 0, 10), synthetic_variable("y", "target", 0, 60)],
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
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("temperature", "source", 300, 380, "K"),
         synthetic_variable("rate", "target", 0, 0.2, "1/min")],
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
    context = simulated_context(synthetic_scenario(
        [synthetic_variable("water_temperature", "source", 5, 60, "degC"),
         synthetic_variable("rate", "target", 0, 2, "1/h")],
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
    for context, binding in template_bindings(TEMPLATES["mechanistic.direct_input"], generated):
        edges = {tuple(edge) for edge in context.simulation.hidden["edges"]}
        direct = [name for name in binding["candidates"].split(", ") if (name, binding["output"]) in edges]
        assert [TEMPLATES["mechanistic.direct_input"].derive(context, binding)] == direct
        assert len(binding["candidates"].split(", ")) == 4
        checked += 1
    assert checked > 50


# -------------------------------------------------------------------------------- on generated datasets


def test_there_are_at_least_six_mechanistic_templates_with_unique_ids():
    ids = [t.id for t in mechanistic.TEMPLATES]
    assert len(set(ids)) == len(ids) and set(NEW) <= set(ids)
    assert len(mechanistic.TEMPLATES) >= 6
    assert all(t.task_type == t.id.split(".")[0] for t in TEMPLATES.values())
