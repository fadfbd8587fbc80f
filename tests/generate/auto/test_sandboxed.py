"""The loop's solver trials and floor gate through the evaluation harness, in the real sandbox.

Each agent is a real program run by `command` agents: an honest analyst that reads the staged
table, an attacker looking for the gold, a floor that always hands in one constant.
"""

import json
import sys
import textwrap
from pathlib import Path

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, llm_options
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages import sandbox
from stages.evaluation.program import Attempt, ServiceReport
from stages.generate.auto import solvers, staged
from stages.generate.auto.generator import Recipe
from stages.generate.auto.loop import implement, judge
from stages.generate.auto.solvers import AgentSolver, FloorGate
from stages.params import AgentParams
from stages.sandbox import SandboxLimits

pytestmark = pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap is not installed")

HONEST = """
import json, re, sys
import pandas as pd
workspace = sys.argv[1]
prompt = open(f"{workspace}/prompt.md").read()
mean_of, over, threshold = re.search(r"mean (\\w+) .* whose (\\w+) is above ([\\d.]+)", prompt).groups()
column, offset = re.search(r"Instrument B reads (\\w+) ([\\d.]+) too high", prompt).groups()
table = pd.read_csv(f"{workspace}/data/table.csv")
table.loc[table["instrument"] == "B", column] -= float(offset)
answer = table.loc[table[over] > float(threshold), mean_of].mean()
json.dump({"answer": float(answer)}, open(f"{workspace}/work/answer.json", "w"))
"""

ATTACKER = """
import json, os, sys
workspace = sys.argv[1]
wanted = {"gold.json", "answers.parquet", "hidden.json", "params.yaml", "dvc.yaml"}
found = [p for p in (os.environ["PROJECT"] + "/processed", os.environ["PROJECT"] + "/params.yaml") if os.path.exists(p)]
for root in ["/work", "/root", "/tmp", "/proc/1/root", "/home"]:
    for folder, _, files in os.walk(root):
        found += [os.path.join(folder, f) for f in files if f in wanted]
json.dump({"answer": -0.0, "found": found[:5]}, open(f"{workspace}/work/answer.json", "w"))
"""


def _agent(tmp_path: Path, name: str, code: str, env: dict | None = None) -> AgentSolver:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "agent.py").write_text(textwrap.dedent(code))
    params = AgentParams(kind="command", options={"cmd": f"{sys.executable} {{agent_dir}}/agent.py {{workspace}}",
                                                  "agent_dir": str(folder), "env": env or {}})
    return AgentSolver(name, params, SandboxLimits().to_limits(), [Path.cwd().resolve()])


@pytest.fixture(scope="module")
def task():
    return implement(Recipe("plant_drought_stress", "descriptive.conditional_mean", 300, ("calibration_offset",), 7))


def test_the_staged_task_shows_the_question_and_the_artefacted_table_never_the_gold(task, tmp_path):
    staged.stage(task, tmp_path)
    prompt, table = staged.prompt(task), (tmp_path / staged.DATA_FILE).read_text()
    assert task.question in prompt and task.notes[0] in prompt and '{"answer": <number>}' in prompt
    assert f"{task.gold:.6g}" not in prompt and f"{task.gold:.6g}"[:6] not in table
    assert table.splitlines()[0].split(",")[:2] == ["sample_id", "instrument"]


def test_an_honest_analyst_in_the_sandbox_solves_every_trial(task, tmp_path):
    analyst = _agent(tmp_path, "analyst", HONEST)
    assert analyst(task, 0) == pytest.approx(task.gold, rel=1e-9)
    assert judge(task, analyst) == {"verifiable": True, "solved": 3, "trials": 3, "difficulty": "easy",
                                    "reason": ""}


def test_an_agent_looking_for_the_gold_finds_nothing_and_fails(task, tmp_path):
    project = Path.cwd().resolve()
    attacker = _agent(tmp_path, "attacker", ATTACKER, env={"PROJECT": str(project)})
    text = attacker.attempt(task, 0)
    assert json.loads(text) == {"answer": 0.0, "found": []}
    assert judge(task, attacker)["difficulty"] == "hard"


def test_the_gate_refuses_a_task_a_constant_floor_passes_and_names_it(task, tmp_path):
    lucky = _agent(tmp_path, "lucky", f"""
        import json, sys
        json.dump({{"answer": {task.gold!r}}}, open(sys.argv[1] + "/work/answer.json", "w"))
    """)
    zero = _agent(tmp_path, "zero", """
        import json, sys
        json.dump({"answer": 0.0}, open(sys.argv[1] + "/work/answer.json", "w"))
    """)
    assert FloorGate({"zero": zero})(task) is None
    gate = FloorGate({"zero": zero, "lucky": lucky})
    assert gate(task) == "passed by the data-free lucky agent"
    assert judge(task, lambda t, trial: pytest.fail("solver called"), gate)["reason"] == (
        "passed by the data-free lucky agent")


def test_an_infrastructure_error_is_never_counted_as_a_failed_trial(task, tmp_path, monkeypatch):
    analyst = _agent(tmp_path, "analyst", HONEST)
    broken = Attempt(None, None, False, "model API: connection refused", 0.1, "", "")
    monkeypatch.setattr(solvers, "run_attempt", lambda *args, **kwargs: (broken, ServiceReport()))
    assert judge(task, analyst) == {"verifiable": True, "solved": None, "trials": 0, "difficulty": None,
                                    "reason": "no trial ran (infrastructure)"}


def test_without_bubblewrap_a_sandboxed_solver_is_refused_when_it_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
    with pytest.raises(sandbox.SandboxUnavailable, match="agent analyst: bubblewrap"):
        _agent(tmp_path, "analyst", HONEST)


def test_an_llm_agent_is_the_loops_solver_one_sandboxed_run_per_trial(task, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    code = textwrap.dedent(HONEST).replace("sys.argv[1]", '"/workspace"')
    with ScriptedLLM([Turn(content=f"```python\n{code}```\n")] * 3) as server:
        solver = AgentSolver("one_turn", AgentParams(kind="llm", options=llm_options(server.base_url,
                                                                                     strategy="one_turn")),
                             SandboxLimits().to_limits(), [Path.cwd().resolve()])
        verdict = judge(task, solver)
    assert verdict == {"verifiable": True, "solved": 3, "trials": 3, "difficulty": "easy", "reason": ""}
    assert len(server.requests) == 3
    for request in server.requests:
        assert task.question in request.text() and task.notes[0] in request.text()
        assert f"{task.gold:.6g}" not in request.text()


def test_a_model_api_that_fails_leaves_the_trial_uncounted(task, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    with ScriptedLLM([Turn(status=500)] * 30) as server:
        solver = AgentSolver("one_turn", AgentParams(kind="llm", options=llm_options(server.base_url,
                                                                                     strategy="one_turn")),
                             SandboxLimits().to_limits(), [Path.cwd().resolve()])
        verdict = judge(task, solver)
    assert verdict == {"verifiable": True, "solved": None, "trials": 0, "difficulty": None,
                       "reason": "no trial ran (infrastructure)"}
