"""The generated MCQs give nothing away to a responder that never opens the data.

Each data-free responder (tests/scibench_testing/mcq_responders.py) must score at most chance (1/4;
1/3 for a question whose answer is one of three levels) plus the one-sided 99.9 % margin over every
candidate MCQ of ten scenarios (two per domain).
"""

from collections import Counter

import numpy as np
import pytest
from scibench_testing.mcq_responders import ENTITY, NUMERIC, log_central
from scipy.stats import binom

from stages.generate.sda import load_scenarios
from stages.generate.sda.build import on_scenario
from stages.generate.sda.dataset import simulate
from stages.generate.sda.instances import candidates
from stages.generate.sda.scenario import DOMAINS
from stages.generate.sda.templates import Context, Template
from stages.params import SdaParams

CHANCE = 0.25
SCENARIOS = [scenario for domain in DOMAINS for scenario in [s for s in load_scenarios() if s.domain == domain][:2]]


@pytest.fixture(scope="module")
def mcqs() -> dict[str, list[dict]]:
    instances = [i for scenario in SCENARIOS for i in on_scenario(scenario, SdaParams()).instances]
    return {kind: [i for i in instances if i["answer_kind"] == kind] for kind in ("number", "entity")}


def accuracy(respond, instances: list[dict]) -> float:
    return float(np.mean([respond(i["options"]) == i["correct_option"] for i in instances]))


def bound(instances: list[dict]) -> float:
    """The one-sided 99.9 % bound on a blind responder's accuracy, each MCQ at chance 1/(its options)."""
    chances = np.array([1 / len(i["options"]) for i in instances])
    if np.all(chances == CHANCE):
        return binom.ppf(0.999, len(chances), CHANCE) / len(chances)
    return (chances.sum() + 3.09 * np.sqrt((chances * (1 - chances)).sum()) + 1) / len(chances)


@pytest.mark.parametrize(("kind", "responders"), [("number", NUMERIC), ("entity", ENTITY)])
def test_no_data_free_responder_beats_chance(mcqs, kind, responders):
    instances = mcqs[kind]
    scores = {name: round(accuracy(respond, instances), 3) for name, respond in responders.items()}
    limit = bound(instances)
    print(kind, len(instances), scores)
    assert len(instances) >= 350
    assert max(scores.values()) <= limit, f"{kind}: n={len(instances)}, bound {limit:.3f}, accuracies {scores}"


def test_the_gate_catches_the_old_multiplicative_defaults(mcqs):
    # the answer with its doubled, halved and negated values, shuffled: the log-central option is the answer
    rng = np.random.default_rng(0)
    old = []
    for instance in mcqs["number"]:
        values = [instance["answer"] * factor for factor in (1.0, 2.0, 0.5, -1.0)]
        order = rng.permutation(4)
        old.append({"options": [values[i] for i in order], "correct_option": "ABCD"[list(order).index(0)]})
    assert accuracy(log_central, old) > bound(old)


def test_the_answer_takes_the_drawn_rank_and_defaults_extend_outward_rounded_like_it():
    scenario = load_scenarios()[0]
    context = Context(scenario, simulate(scenario, 100, 1))
    template = Template("t.scaled", "descriptive", "What is the scaled mean of {variable}?", "number",
                        lambda c, rng: {"variable": c.measured()[0]}, lambda c, b: 37.5 * b.get("scale", 1.0),
                        diffusion=lambda c, b: [b | {"scale": 1.1}],
                        confusion=lambda c, b: [b | {"scale": -1.0}, b | {"scale": 0.5}])
    # seed 2 draws no option below the answer: the diffusion (41.25) enters, the halving confusion (18.75)
    # does not, the negated one never does (other sign), and two Defaults extend above from 41.25
    instance, = candidates(template, context, 2, 1, Counter())
    assert instance["options"] == [100.8, 79.1, 37.5, 41.25]
    assert instance["option_perturbations"] == ["default", "default", None, "diffusion"]
    assert instance["correct_option"] == "C"
    # seed 1 draws three below: the halving confusion, then Defaults below it
    instance, = candidates(template, context, 1, 1, Counter())
    assert instance["options"] == [9.4, 18.75, 12.6, 37.5]
    assert instance["option_perturbations"] == ["default", "confusion", "default", None]
    assert candidates(template, context, 1, 1, Counter()) == [instance]


def test_listed_names_are_labelled_by_the_perturbation_that_gives_them_else_listed():
    scenario = load_scenarios()[0]
    context = Context(scenario, simulate(scenario, 100, 1))
    alpha, beta, delta, gamma = context.numeric_columns()[:4]
    template = Template("t.listed", "causal", "Of {candidates}, which one drives it?", "entity",
                        lambda c, rng: {"candidates": ", ".join([alpha, beta, delta, gamma])},
                        lambda c, b: b.get("pick", beta), confusion=lambda c, b: [b | {"pick": gamma}])
    instance, = candidates(template, context, 1, 1, Counter())
    labels = dict(zip(instance["options"], instance["option_perturbations"], strict=True))
    assert labels == {beta: None, gamma: "confusion", alpha: "listed", delta: "listed"}
