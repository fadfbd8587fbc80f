"""SDA-style generation: synthetic scientific datasets whose task answers are derived, not annotated.

A scenario (`scenario`) is a semantic DAG of measured variables with their mechanisms; `dataset`
generates its table in topological order with measurement noise and distractor columns, keeping the
graph, equations and seed as hidden metadata. Scenarios live as YAML under `scenarios/<domain>.yaml`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from stages.generate.sda.scenario import DOMAINS, Scenario
from stages.yamlfile import read_yaml

SCENARIOS = Path(__file__).parent / "scenarios"


@cache
def load_scenarios() -> tuple[Scenario, ...]:
    """Every scenario, domain by domain in `DOMAINS` order, each file's in its order; ids unique."""
    scenarios = []
    for domain in DOMAINS:
        path = SCENARIOS / f"{domain}.yaml"
        if not path.exists():
            continue
        for entry in read_yaml(path):
            scenario = Scenario.model_validate(entry)
            if scenario.domain != domain:
                raise ValueError(f"{path}: scenario {scenario.id} is of domain {scenario.domain}")
            scenarios.append(scenario)
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{SCENARIOS}: a scenario id is used twice")
    return tuple(scenarios)
