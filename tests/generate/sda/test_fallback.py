"""The pinned LLM fallback for OEQ misses, against the scripted loopback server: counted apart, never strict."""

import pytest
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.generate.sda.fallback import fallback
from stages.params import JudgeParams

NUMBER = {"instance_id": "n1", "question": "What is the mean of x?", "answer": 2.5, "answer_kind": "number",
          "tolerance": 0.02, "options": [2.5, 5.0, 1.25, 10.0], "option_perturbations": [None, "default", "default",
                                                                                         "default"],
          "correct_option": "A"}
ENTITY = {"instance_id": "e1", "question": "Which variable is most skewed?", "answer": "leaf_area",
          "answer_kind": "entity", "tolerance": 0.0, "options": ["leaf_area", "stem", "root"],
          "option_perturbations": [None, "default", "default"], "correct_option": "A"}


def _settings(server) -> JudgeParams:
    return JudgeParams(model="judge-model", base_url=server.base_url, api_key_env=None, max_retries=0, seed=3)


def test_only_parsed_misses_are_asked_and_accepted_ones_are_counted_apart():
    responses = {("n1", "oeq"): 2.6, ("e1", "oeq"): "Leaf area", ("n1", "mcq"): "B", ("e1", "mcq"): "A"}
    with ScriptedLLM([Turn(content="DIFFERENT"), Turn(content="EQUIVALENT.")]) as server:
        result = fallback([ENTITY, NUMBER], responses, _settings(server))
    assert result == {"model": "judge-model", "seed": 3, "asked": 2, "accepted": 1, "infra_errors": 0,
                      "accuracy_strict": 0.0, "accuracy_with_fallback": 0.5}
    first, second = (request.body for request in server.requests)
    assert first["model"] == "judge-model" and first["temperature"] == 0.0 and first["seed"] == 3
    assert "Reference answer: leaf_area" in first["messages"][1]["content"]
    assert "Response: Leaf area" in first["messages"][1]["content"]
    assert "Reference answer: 2.5 (relative tolerance 0.02)" in second["messages"][1]["content"]


def test_a_correct_or_missing_answer_is_never_asked_and_a_failing_judge_accepts_nothing():
    responses = {("n1", "oeq"): 2.51, ("e1", "oeq"): None}
    with ScriptedLLM([]) as server:
        assert fallback([ENTITY, NUMBER], responses, _settings(server))["asked"] == 0
    assert server.requests == []
    with ScriptedLLM([Turn(status=500)]) as server:
        result = fallback([NUMBER], {("n1", "oeq"): 9.0}, _settings(server))
    assert (result["asked"], result["accepted"], result["infra_errors"]) == (1, 0, 1)


@pytest.mark.parametrize("reply", ["equivalent, mostly", "", "Yes"])
def test_any_other_reply_counts_as_different(reply):
    with ScriptedLLM([Turn(content=reply)]) as server:
        assert fallback([NUMBER], {("n1", "oeq"): 9.0}, _settings(server))["accepted"] == 0
