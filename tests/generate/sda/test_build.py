"""The generated SDA benchmark: deterministic, gold kept private, MCQs well formed, guessing fails."""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from stages.generate.sda import load_scenarios
from stages.generate.sda.build import build, write
from stages.generate.sda.dataset import simulate
from stages.generate.sda.instances import candidates, correct
from stages.generate.sda.templates import Context, Template
from stages.params import SdaParams

PARAMS = SdaParams(n_rows=200, attempts=4)
FIRST_OF_EACH_DOMAIN = list({s.domain: s for s in reversed(load_scenarios())}.values())  # one per domain


@pytest.fixture(scope="module")
def generated():
    return build(PARAMS, "tiny", FIRST_OF_EACH_DOMAIN)


def test_the_same_params_write_byte_identical_files(generated, tmp_path):
    write(generated, tmp_path / "one")
    write(build(PARAMS, "tiny", FIRST_OF_EACH_DOMAIN), tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*")
                                     if p.is_file())
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_public_files_hold_no_answer_option_label_binding_or_generator(generated, tmp_path):
    write(generated, tmp_path)
    public = pd.read_parquet(tmp_path / "instances.parquet")
    assert set(public.columns) == {"instance_id", "scenario", "domain", "task_type", "template", "split", "dataset",
                                   "format", "question", "options"}
    datasets = sorted(p.name for p in (tmp_path / "datasets").iterdir())
    assert datasets == sorted(f"{s.id}.parquet" for s in FIRST_OF_EACH_DOMAIN)
    for path in (tmp_path / "datasets").iterdir():
        table = pd.read_parquet(path)
        assert not {"seed", "edges", "mechanisms"} & set(table.columns)
    hidden = json.loads((tmp_path / "private" / "hidden.json").read_text())
    assert set(hidden) == {s.id for s in FIRST_OF_EACH_DOMAIN}
    answers = pd.read_parquet(tmp_path / "private" / "answers.parquet")
    assert set(answers["instance_id"]) == set(public["instance_id"])


def test_every_pair_of_domain_and_task_type_is_filled_and_both_formats_share_a_split(generated):
    counts = Counter((i["domain"], i["task_type"]) for i in generated.instances)
    domains = {s.domain for s in load_scenarios()}
    assert {key: counts[key] for key in counts} == {(d, t): 5 for d in domains for t in
                                                     ("descriptive", "inferential", "causal", "mechanistic",
                                                      "exploratory", "predictive")}
    for key in counts:
        splits = Counter(i["split"] for i in generated.instances if (i["domain"], i["task_type"]) == key)
        assert splits == {"train": 3, "test": 2}


def test_each_mcq_has_four_distinct_options_one_of_them_the_answer_under_its_label(generated):
    scenarios = {s.id: s for s in load_scenarios()}
    for instance in generated.instances:
        options, answer = instance["options"], instance["answer"]
        scenario = scenarios[instance["scenario"]]
        levels = scenario.groups[scenario.group]
        assert len(options) == (len(levels) if answer in levels else 4) and len(set(map(str, options))) == len(options)
        matches = [i for i, value in enumerate(options) if correct(value, answer, instance["tolerance"])]
        assert [ "ABCD"[i] for i in matches] == [instance["correct_option"]], instance["question"]
        assert instance["option_perturbations"].count(None) == 1


def test_answers_derived_again_from_the_written_dataset_match(generated, tmp_path):
    # the derivation reads only the table an agent is given: re-derive every kept instance from the file
    write(generated, tmp_path)
    from stages.generate.sda.templates import TEMPLATES
    scenarios = {s.id: s for s in load_scenarios()}
    for instance in generated.instances:
        scenario = scenarios[instance["scenario"]]
        if instance["task_type"] == "causal":
            continue  # causal answers replay the hidden generator, checked in the causal template tests
        table = pd.read_parquet(tmp_path / "datasets" / f"{scenario.id}.parquet")
        simulation = simulate(scenario, PARAMS.n_rows, PARAMS.seed)
        context = Context(scenario, type(simulation)(simulation.true, table, simulation.hidden))
        again = TEMPLATES[instance["template"]].derive(context, instance["binding"])
        assert correct(again, instance["answer"], 1e-9), instance["question"]


def test_a_prompt_only_fabricator_and_a_constant_mcq_answer_stay_near_chance(generated):
    # Plausible numbers without the data: the midpoint of the declared range of a variable the question names.
    scenarios = {s.id: s for s in load_scenarios()}
    numeric = [i for i in generated.instances if i["answer_kind"] == "number"]
    hits = 0
    for instance in numeric:
        scenario = scenarios[instance["scenario"]]
        named = [v for v in scenario.variables if v.name in instance["question"]]
        guess = (named[0].low + named[0].high) / 2 if named else 0.5
        hits += correct(guess, instance["answer"], instance["tolerance"])
    assert hits / len(numeric) < 0.05
    always_a = np.mean([i["correct_option"] == "A" for i in generated.instances])
    assert 0.1 < always_a < 0.4


def test_the_verifier_counts_each_rejection_by_its_reason():
    scenario = load_scenarios()[0]
    context = Context(scenario, simulate(scenario, 100, 1))
    rejected = Counter()
    unresolved = Template("t.unresolved", "descriptive", "What is the mean of {variable} in {nowhere}?", "number",
                          lambda c, rng: {"variable": c.measured()[0]}, lambda c, b: 1.0)
    leaking = Template("t.leaking", "descriptive", "Is the answer {value}? Give the mean of {variable}.", "number",
                       lambda c, rng: {"variable": c.measured()[0], "value": 2.5}, lambda c, b: 2.5)
    wrong_column = Template("t.column", "descriptive", "Mean of {variable}?", "number",
                            lambda c, rng: {"variable": "no_such_column"}, lambda c, b: 1.0)
    none = Template("t.none", "descriptive", "Mean of {variable}?", "number", lambda c, rng: None, lambda c, b: 1.0)
    undefined = Template("t.nan", "descriptive", "Mean of {variable}?", "number",
                         lambda c, rng: {"variable": c.measured()[0]}, lambda c, b: float("nan"))
    first = scenario.variable(context.measured()[0])
    guessable = Template("t.guess", "descriptive", "What is the mean of {variable}?", "number",
                         lambda c, rng: {"variable": first.name}, lambda c, b: (first.low + first.high) / 2 * 1.01)
    for template in (unresolved, leaking, wrong_column, none, undefined, guessable):
        assert candidates(template, context, 1, 2, rejected) == []
    assert rejected == {"unresolved_placeholder": 2, "answer_leakage": 2, "schema_mismatch": 2, "no_binding": 2,
                        "undefined_answer": 2, "guessable_without_data": 2}


@pytest.mark.parametrize(("binding", "fits"), [
    ({"x": "a", "y": "b", "level": "wild"}, True),
    ({"columns": "a, b, c"}, True),
    ({"candidates": "a+b, c"}, True),
    ({"x": "a", "y": "b", "grid": "0.5, 1, 2.25"}, True),
    ({"x": "a", "y": "nope"}, False),
    ({"columns": "a, nope, c"}, False),
    ({"candidates": "a+nope, c"}, False),
    ({"level": "mutant"}, False),
    ({"x": "a", "y": "b", "grid": "0.5, high"}, False),
])
def test_every_slot_that_names_columns_levels_or_a_grid_is_checked_against_the_schema(binding, fits):
    from stages.generate.sda.instances import fits_schema

    assert fits_schema(binding, {"a", "b", "c"}, {"wild", "knockout"}) is fits


def test_an_entity_mcq_offers_only_names_of_the_answers_kind(generated):
    scenarios = {s.id: s for s in load_scenarios()}
    entity = [i for i in generated.instances if i["answer_kind"] == "entity"]
    assert entity
    for instance in entity:
        scenario = scenarios[instance["scenario"]]
        levels = set(scenario.groups[scenario.group])
        assert all((option in levels) == (instance["answer"] in levels) for option in instance["options"]), instance
