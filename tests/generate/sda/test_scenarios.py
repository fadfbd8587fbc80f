"""Every SDA scenario loads, generates deterministically and stays in its declared ranges."""

import numpy as np
import pytest

from stages.generate.sda import load_scenarios
from stages.generate.sda.dataset import in_range_share, simulate
from stages.generate.sda.scenario import Scenario

SCENARIOS = load_scenarios()


def test_every_domain_has_scenarios_and_ids_are_unique():
    domains = {s.domain for s in SCENARIOS}
    assert domains <= {"biology", "chemistry", "environment", "geography", "physics"} and domains
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_scenario_has_the_shape_every_task_type_needs(scenario: Scenario):
    roles = [v.role for v in scenario.variables]
    assert 3 <= roles.count("source") <= 5 and 2 <= roles.count("internal") <= 4 and 1 <= roles.count("target") <= 2
    kinds = {m.kind for m in scenario.mechanisms}
    assert "causal" in kinds and "algebraic" in kinds
    assert 2 <= len(scenario.groups[scenario.group]) <= 4 and scenario.group_effects
    assert len(scenario.distractors) >= 2
    for mechanism in scenario.mechanisms:
        if mechanism.kind == "causal":
            assert sum(w ** 2 for w in mechanism.weights.values()) < 1, mechanism.output


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_scenario_generates_finite_in_range_values_where_each_output_follows_its_parents(scenario: Scenario):
    for seed in (1, 2, 3):
        simulation = simulate(scenario, 400, seed)
        numeric = simulation.table.drop(columns=["sample_id", scenario.group])
        assert np.isfinite(numeric.to_numpy()).all()
        shares = in_range_share(scenario, simulation)
        assert min(shares.values()) >= 0.98, {k: v for k, v in shares.items() if v < 0.98}
        for mechanism in scenario.mechanisms:
            output = simulation.true[mechanism.output]
            assert output.std() > 0, mechanism.output
            strongest = max(abs(np.corrcoef(simulation.true[p], output)[0, 1]) for p in mechanism.parents())
            assert strongest > 0.3, f"{mechanism.output} hardly follows {mechanism.parents()}"


@pytest.mark.parametrize("scenario", SCENARIOS[:2], ids=lambda s: s.id)
def test_the_same_seed_gives_the_same_table_and_another_seed_another(scenario: Scenario):
    first, again, other = simulate(scenario, 200, 5), simulate(scenario, 200, 5), simulate(scenario, 200, 6)
    assert first.table.equals(again.table) and not first.table.equals(other.table)
    assert first.hidden == again.hidden
