"""The autoscibench flow's wiring: params pick the generator, the floors gate in the sandbox, the model's log."""

import json
import re

import pytest
from scibench_testing.scripted_llm import ScriptedLLM, Turn

import flows.generate as flow
from stages import sandbox
from stages.generate.auto import outputs
from stages.generate.auto.generator import Concept
from stages.generate.sda import load_scenarios
from stages.generate.sda.templates import TEMPLATES
from stages.params import GeneratorParams, load_params

pytestmark = pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap is not installed")


def _reply(request):
    """The first scenario and template of the menu; a calibration offset once a recipe is revised."""
    text = request.text()
    if "Seed concept" in text:
        return Turn(content='{"operations": ["descriptive"], "rationale": "keep"}')
    scenario = re.findall(r"^- ([a-z0-9_]+): ", text.split("Scenarios (id: title):")[1], re.M)[0]
    template = re.findall(r"^- ([a-z_.]+) \[", text, re.M)[0]
    hiding = ["calibration_offset"] if "Previous recipe" in text else []
    return Turn(content=json.dumps({"scenario": scenario, "template": template, "hiding": hiding, "rationale": ""}))


def test_a_model_generator_from_params_proposes_the_recipes_and_its_calls_are_logged(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "seed_concepts", lambda: [Concept("biology", "table", ("descriptive",))])
    params = load_params()
    with ScriptedLLM(_reply) as server:
        model = GeneratorParams(kind="openai", model="m", base_url=server.base_url, api_key_env=None)
        settings = params.generate.auto.model_copy(update={"generator": model})
        summary = flow.autoscibench.fn(settings, params.generate.floors, params.agents, params.evaluate.limits,
                                       tmp_path)
    rounds = json.loads((tmp_path / "rounds.json").read_text())[0]["rounds"]
    first = rounds[0]["recipe"]
    first_scenario = next(s.id for s in load_scenarios() if s.domain == "biology")
    first_template = min(t for t in TEMPLATES if TEMPLATES[t].task_type == "descriptive")
    assert (first["scenario"], first["template"], first["hiding"]) == (first_scenario, first_template, [])
    assert all(r["recipe"]["hiding"] == ["calibration_offset"] for r in rounds[1:])
    log = (tmp_path / "generator_log.jsonl").read_text().splitlines()
    assert summary["generator"]["name"] == "openai:m"
    assert len(log) == summary["generator"]["usage"]["calls"] == len(server.requests)
    assert summary["generator"]["usage"]["fallbacks"] == 0
    gold = json.loads((tmp_path / "private" / "gold.json").read_text())
    assert gold and all(json.dumps(entry["gold"]) not in "\n".join(log) for entry in gold)


def test_an_offline_run_leaves_no_model_log_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "seed_concepts", lambda: [Concept("physics", "table", ("inferential",))])
    (tmp_path / "generator_log.jsonl").write_text("stale\n")
    params = load_params()
    summary = flow.autoscibench.fn(params.generate.auto, params.generate.floors, params.agents,
                                   params.evaluate.limits, tmp_path)
    assert summary["generator"] == {"name": "offline", "usage": None}
    assert not (tmp_path / "generator_log.jsonl").exists()
