"""Synthetic SDA scenarios, their simulated contexts and template bindings, shared by the SDA template tests."""

from __future__ import annotations

import numpy as np

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import simulate
from stages.generate.sda.scenario import Scenario
from stages.generate.sda.templates import Context, Template


def synthetic_variable(name: str, role: str, low: float, high: float, unit: str = "V") -> dict:
    """A scenario variable's spec, described by its own name."""
    return {"name": name, "role": role, "unit": unit, "low": low, "high": high, "description": name}


def synthetic_scenario(variables: list[dict], mechanisms: list[dict], scenario_id: str = "synthetic") -> Scenario:
    """A physics scenario of these variables and mechanisms, two batch groups and one distractor."""
    return Scenario.model_validate({
        "id": scenario_id, "domain": "physics", "title": "a synthetic test scenario", "unit_of_observation": "a run",
        "groups": {"batch": ["first", "second"]}, "variables": variables, "mechanisms": mechanisms,
        "distractors": [synthetic_variable("bench_number", "source", 1, 40)]})


def simulated_context(scenario: Scenario, n_rows: int = 400, seed: int = 3) -> Context:
    """The template context of `scenario` simulated with n_rows rows from `seed`."""
    return Context(scenario, simulate(scenario, n_rows, seed))


def generated_contexts() -> list[Context]:
    """A simulated context for every generated scenario (the body of the tests' `generated` fixture)."""
    return [simulated_context(scenario) for scenario in load_scenarios()]


def template_bindings(template: Template, contexts: list[Context], draws: int = 3) -> list[tuple[Context, dict]]:
    """The distinct bindings `template` draws on each context from seeds 0..draws-1, with their context."""
    found = []
    for context in contexts:
        seen = set()
        for seed in range(draws):
            binding = template.bind(context, np.random.default_rng(seed))
            if binding is not None and repr(sorted(binding.items())) not in seen:
                seen.add(repr(sorted(binding.items())))
                found.append((context, binding))
    return found


def low_noise(scenario: Scenario) -> Scenario:
    """The scenario with the noise of every mechanism set to zero."""
    return scenario.model_copy(update={"mechanisms": tuple(m.model_copy(update={"noise": 0.0})
                                                           for m in scenario.mechanisms)})
