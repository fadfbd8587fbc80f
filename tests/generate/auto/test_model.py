"""A model as the AutoSciBench generator, against the scripted OpenAI-compatible loopback server."""

import json

import numpy as np
import pytest
from scibench_testing.scripted_llm import ScriptedLLM, Turn, usage

from stages.generate.auto import loop, outputs
from stages.generate.auto.generator import Concept, Menu, OfflineGenerator, Recipe
from stages.generate.auto.model import ModelGenerator, prior_concepts
from stages.params import Generation

CONCEPT = Concept("biology", "table", ("descriptive",))
MENU = Menu(("plant_drought_stress", "ecoli_batch_growth"),
            ("descriptive.conditional_mean", "descriptive.geometric_mean"),
            ("sentinel_missing", "duplicated_records", "calibration_offset"), 300, 7)
VERDICT = {"verifiable": True, "solved": 3, "trials": 3, "difficulty": "easy", "reason": ""}


def _generator(server: ScriptedLLM) -> ModelGenerator:
    return ModelGenerator("scripted", server.base_url, None, Generation(temperature=0.5, seed=3, max_tokens=300),
                          timeout_s=10, max_retries=0)


def _reply(scenario: str, template: str, hiding: list[str], **turn) -> Turn:
    return Turn(json.dumps({"scenario": scenario, "template": template, "hiding": hiding, "rationale": "r"}), **turn)


def test_scripted_replies_give_exactly_the_scripted_recipes():
    fenced = Turn("```json\n" + _reply("ecoli_batch_growth", "descriptive.geometric_mean", []).content + "\n```")
    script = [Turn('{"operations": ["descriptive"], "rationale": "keep"}'), fenced,
              _reply("plant_drought_stress", "descriptive.conditional_mean", ["calibration_offset"])]
    with ScriptedLLM(script) as server:
        generator = _generator(server)
        concept = generator.concept(Concept("biology", "table", ("descriptive", "causal")), [])
        first = generator.first(concept, MENU, [], np.random.default_rng(0))
        revised = generator.revise(concept, first, VERDICT, MENU, [], np.random.default_rng(0))
    assert concept == CONCEPT
    assert first == Recipe("ecoli_batch_growth", "descriptive.geometric_mean", 300, (), 7)
    assert revised == Recipe("plant_drought_stress", "descriptive.conditional_mean", 300, ("calibration_offset",), 7)
    body = server.requests[1].body
    assert (body["model"], body["temperature"], body["seed"], body["max_tokens"]) == ("scripted", 0.5, 3, 300)
    menu_shown = server.requests[1].text()
    assert "ecoli_batch_growth: Logistic growth of Escherichia coli" in menu_shown
    assert "descriptive.geometric_mean [descriptive]: What is the geometric mean of {variable}" in menu_shown
    assert "calibration_offset: Half the samples measured on instrument B" in menu_shown
    assert '"difficulty": "easy"' in server.requests[2].text() and generator.fallbacks == 0


@pytest.mark.parametrize(("reply", "problem"), [
    (_reply("plant_drought_stress", "causal.do_mean", ["invented"]).content,
     "recipe outside the menu: template 'causal.do_mean', hiding strategy 'invented'"),
    ("I would pick the drought scenario.", "the reply is not a JSON object"),
])
def test_an_unusable_reply_is_retried_once_stating_the_problem_then_falls_back(reply, problem):
    with ScriptedLLM([Turn(reply), Turn(reply)]) as server:
        generator = _generator(server)
        recipe = generator.first(CONCEPT, MENU, [], np.random.default_rng(4))
    assert len(server.requests) == 2
    assert problem not in server.requests[0].text()
    assert f"Your reply could not be used: {problem}." in server.requests[1].text()
    assert recipe == OfflineGenerator().first(CONCEPT, MENU, [], np.random.default_rng(4))
    assert generator.fallbacks == generator.usage["fallbacks"] == 1
    assert [entry["fallback"] for entry in generator.log] == [None, f"offline generator: {problem}"]


def test_a_failing_model_api_falls_back_without_a_second_request():
    with ScriptedLLM([Turn(status=401)]) as server:
        generator = _generator(server)
        recipe = generator.first(CONCEPT, MENU, [], np.random.default_rng(4))
    assert len(server.requests) == 1 and recipe == OfflineGenerator().first(CONCEPT, MENU, [], np.random.default_rng(4))
    assert generator.log[0]["fallback"].startswith("offline generator: model API: AuthenticationError")
    assert generator.usage["calls"] == 0 and generator.fallbacks == 1


def test_a_concept_that_widens_the_operations_keeps_the_seed():
    with ScriptedLLM([Turn('{"operations": ["causal"]}')] * 2) as server:
        generator = _generator(server)
        assert generator.concept(CONCEPT, []) == CONCEPT
    assert generator.fallbacks == 1 and "non-empty subset of ['descriptive']" in server.requests[1].text()


def test_no_prompt_contains_the_gold_of_any_task():
    recipes = [(s, t, h) for s in MENU.scenarios for t in MENU.templates
               for h in ([], ["calibration_offset"], ["sentinel_missing", "duplicated_records"])]

    def script(request):
        if "Seed concept" in request.text():
            return Turn('{"operations": ["descriptive"]}')
        asked = sum("Seed concept" not in r.text() for r in server.requests)
        return _reply(*recipes[(asked - 1) % len(recipes)])

    leaky_card = {"concept": ["physics", "table", ["descriptive"]], "summary": "1 rounds; kept a hard task",
                  "useful_patterns": ["duplicated_records"], "gold": 123.456789}  # a key no card should have
    with ScriptedLLM(script) as server:
        run = loop.run_concept(CONCEPT, [leaky_card], lambda task, trial: task.gold if trial == 0 else None, 7,
                               _generator(server))
    golds = [loop.implement(Recipe(**r["recipe"] | {"hiding": tuple(r["recipe"]["hiding"])})).gold
             for r in run.rounds]
    assert len(run.rounds) == loop.MAX_RECIPE_REVISIONS + 1 and len(server.requests) == len(run.rounds) + 1
    assert all(isinstance(gold, float) and not gold.is_integer() for gold in golds)
    prompts = "\n".join(request.text() for request in server.requests)
    assert '"physics", "table"' in prompts and "123.456789" not in prompts
    for gold in golds:
        assert repr(gold) not in prompts and f"{gold:.6g}" not in prompts


def test_usage_is_summed_from_what_the_server_reports(tmp_path):
    script = [Turn('{"operations": ["descriptive"]}', usage=usage(120, 30)),
              _reply("plant_drought_stress", "descriptive.conditional_mean", [], usage=usage(80, 10)),
              Turn("no JSON here", usage=None), Turn("nor here", usage=usage(50, 5))]
    with ScriptedLLM(script) as server:
        generator = _generator(server)
        generator.concept(CONCEPT, [])
        recipe = generator.first(CONCEPT, MENU, [], np.random.default_rng(0))
        generator.revise(CONCEPT, recipe, VERDICT, MENU, [], np.random.default_rng(0))
    assert generator.usage == {"model": "scripted", "calls": 4, "prompt_tokens": 250, "completion_tokens": 45,
                               "fallbacks": 1, "flags": ["missing_usage"]}
    generator.write_log(tmp_path / "generator_log.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "generator_log.jsonl").read_text().splitlines()]
    assert [(e["step"], e["attempt"]) for e in lines] == [("concept", 1), ("first", 1), ("revise", 1), ("revise", 2)]
    assert lines[1]["usage"] == {"prompt_tokens": 80, "completion_tokens": 10, "flags": []}


def test_the_report_names_the_generator_and_its_usage(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "seed_concepts", lambda: [CONCEPT])
    with ScriptedLLM(lambda request: Turn("not a recipe", usage=usage(10, 2))) as server:
        generator = _generator(server)
        summary = outputs.write_outputs(tmp_path, 7, lambda task, trial: None, generator)
    assert summary["generator"]["name"] == "openai:scripted"
    assert summary["generator"]["usage"] == {"model": "scripted", "calls": len(server.requests),
                                             "prompt_tokens": 10 * len(server.requests),
                                             "completion_tokens": 2 * len(server.requests),
                                             "fallbacks": len(server.requests) // 2, "flags": []}
    assert json.loads((tmp_path / "report.json").read_text())["generator"] == summary["generator"]
    offline = outputs.write_outputs(tmp_path / "offline", 7, lambda task, trial: None)
    assert offline["generator"] == {"name": "offline", "usage": None}


def test_at_most_the_cap_of_prior_concepts_a_seeded_sample_in_order():
    cards = [{"concept": ["d", "table", [str(i)]]} for i in range(loop.MAX_PRIOR_CONCEPTS + 30)]
    sample = prior_concepts(cards, 5)
    assert len(sample) == loop.MAX_PRIOR_CONCEPTS and sample == prior_concepts(cards, 5) != prior_concepts(cards, 6)
    assert [int(c[2][0]) for c in sample] == sorted(int(c[2][0]) for c in sample)
    assert prior_concepts(cards[:10], 5) == [card["concept"] for card in cards[:10]]
