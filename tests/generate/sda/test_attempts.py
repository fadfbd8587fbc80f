"""Agents on the generated instances in the real sandbox, and the gate that keeps data-free agents at chance."""

import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from stages import sandbox
from stages.generate.sda import load_scenarios
from stages.generate.sda.attempts import answer_spec, attempt_all, bound, choices, gate, load, prompt
from stages.generate.sda.build import build, write
from stages.params import AgentParams, load_params
from stages.sandbox import SandboxLimits

pytestmark = pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap is not installed")
SCENARIOS = [s for s in load_scenarios() if s.id in ("plant_drought_stress", "pendulum_damping")]
LIMITS = SandboxLimits().to_limits()


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sda")
    write(build(load_params().generate.sda, "tiny", SCENARIOS), folder)
    return folder


def _command(folder: Path, code: str) -> AgentParams:
    """A command agent from `code`; `folder` (mounted at /agent) must be readable by the sandbox's user."""
    folder.mkdir(mode=0o755, exist_ok=True)
    (folder / "agent.py").write_text(textwrap.dedent(code))
    return AgentParams(kind="command", options={"cmd": f"{sys.executable} {{agent_dir}}/agent.py {{workspace}}",
                                                "agent_dir": str(folder)})


def test_the_prompt_shows_question_options_and_format_never_the_answer(benchmark):
    instances = load(benchmark, "test")
    assert instances
    for instance in instances:
        for form in ("oeq", "mcq"):
            spec = answer_spec(instance, form, choices(benchmark, instance["dataset"]))
            text = prompt(instance, form, spec)
            assert instance["question"] in text and f"data/{Path(instance['dataset']).name}" in text
            assert ("A. " in text) == (form == "mcq")
            assert "correct_option" not in text and "perturbation" not in text
            if form == "oeq" and isinstance(instance["answer"], float):  # an MCQ shows it among the options
                assert f"{instance['answer']:.10g}" not in text


def test_the_nodata_floor_scores_exactly_what_its_blind_answers_match(benchmark):
    instances = load(benchmark, "test")
    responses = attempt_all(instances, benchmark, "nodata", load_params().agents["nodata"], LIMITS)
    assert {responses[(i["instance_id"], "mcq")] for i in instances} == {"A"}  # the first category, blind
    for instance in instances:
        first = choices(benchmark, instance["dataset"])[0]
        assert responses[(instance["instance_id"], "oeq")] == (first if instance["answer_kind"] == "entity" else 0.0)
    mcq_hits = sum(i["correct_option"] == "A" for i in instances)
    result = gate({"nodata": load_params().agents["nodata"]}, LIMITS, (benchmark,))
    figures = result["floors"][benchmark.name]["nodata"]
    assert figures["mcq"]["accuracy"] == round(mcq_hits / len(instances), 4)
    assert figures["mcq"]["n"] == len(instances) and result["failures"] == []


def test_a_floor_that_was_leaked_the_labels_fails_the_gate_by_name(benchmark, tmp_path):
    instances = load(benchmark, "test")
    leaked = {hashlib.sha256(i["question"].encode()).hexdigest(): i["correct_option"] for i in instances}
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(mode=0o755)
    (agent_dir / "leak.json").write_text(json.dumps(leaked))
    agent = _command(agent_dir, """
        import hashlib, json, re, sys
        workspace = sys.argv[1]
        text = open(workspace + "/prompt.md").read()
        question = text.split("\\n\\n")[1]
        letter = json.load(open("/agent/leak.json")).get(hashlib.sha256(question.encode()).hexdigest(), "A")
        json.dump({"answer": letter}, open(workspace + "/work/answer.json", "w"))
    """)
    result = gate({"leaky": agent}, LIMITS, (benchmark,))
    assert result["floors"][benchmark.name]["leaky"]["mcq"]["accuracy"] == 1.0
    assert result["failures"] == [
        f"{benchmark}: the data-free leaky agent scores 1.000 on the mcq questions of the test split, above chance"
        f" 0.250 (bound {bound(0.25, len(instances)):.3f})"]


def test_an_agent_hunting_for_the_answers_file_finds_nothing(benchmark, tmp_path):
    instances = load(benchmark, "test")[:2]
    agent = _command(tmp_path / "agent", """
        import json, os, sys
        found = [os.path.join(d, f) for root in ("/", "/tmp", "/workspace") for d, _, files in os.walk(root)
                 if not d.startswith(("/proc", "/sys", "/usr", "/dev")) for f in files
                 if f in ("answers.parquet", "hidden.json", "summary.json")]
        json.dump({"answer": "A" if not found else f"found {found}"}, open(sys.argv[1] + "/work/answer.json", "w"))
    """)
    answers = attempt_all(instances, benchmark, "hunter", agent, LIMITS)
    assert {v for (_, form), v in answers.items() if form == "mcq"} == {"A"}  # anything found is not a letter
    assert pd.read_parquet(benchmark / "private" / "answers.parquet").shape[0] > 0
