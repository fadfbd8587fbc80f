"""Workflow documents (stages/evaluation/agents/llm/workflows/): the built-in strategies load, and a
document that cannot run is refused on load with the field that is wrong named."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, llm_options, run_llm_query
from scibench_testing.scripted_llm import ScriptedLLM, Turn

from stages.evaluation.agents.llm.options import Options, Strategy
from stages.evaluation.agents.llm.workflows import BUILTIN, WorkflowError, builtin_workflow, load_workflow

TEAM = [{"id": "plan", "op": "generate", "role": "planner", "prompt": "planner"},
        {"id": "model", "op": "tool_loop", "role": "modeler", "prompt": "modeler", "finish": "submit",
         "inputs": ["plan"]}]


def write(tmp_path, nodes: list[dict], **fields):
    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump({"name": "mine", "nodes": nodes, **fields}))
    return path


def test_every_strategy_an_llm_agent_can_name_is_a_built_in_document():
    assert sorted(p.stem for p in BUILTIN.glob("*.yaml")) == sorted(Strategy.__args__)
    team = builtin_workflow("workflow")
    assert [(node.id, node.op, node.inputs) for node in team.nodes] == [
        ("planner", "generate", []), ("data_preparation", "tool_loop", ["planner"]),
        ("modeler", "tool_loop", ["planner", "data_preparation"]),
        ("verifier", "tool_loop", ["planner", "data_preparation", "modeler"])]
    assert builtin_workflow("reflexion").nodes[0].repair == "reflect"


def test_a_valid_team_loads(tmp_path):
    loaded = load_workflow(write(tmp_path, TEAM))
    assert (loaded.name, [node.note_heading() for node in loaded.nodes]) == ("mine", ["From the planner",
                                                                                   "From the modeler"])


@pytest.mark.parametrize(("change", "message"), [
    ({"op": "brainstorm"}, "nodes.1.op"),
    ({"inputs": ["later"]}, "nodes[1].inputs: 'later' is not an earlier node"),
    ({"inputs": ["model"]}, "nodes[1].inputs: 'model' is not an earlier node"),
    ({"prompt": "oracle"}, "node 'model': prompt 'oracle' is not one of"),
    ({"prompt": None}, "node 'model': `prompt` is required for op 'tool_loop'"),
    ({"finish": None}, "node 'model': `finish` is for a tool_loop"),
    ({"turns": 0}, "`turns` and `rounds` are at least 1"),
    ({"repair": "debug"}, "node 'model': `repair` is for a program node"),
    ({"id": "plan"}, "nodes[1]: the id 'plan' is used twice"),
    ({"model": "gpt-4o"}, "nodes.1.model"),
])
def test_a_document_that_cannot_run_names_the_field(tmp_path, change, message):
    nodes = [TEAM[0], {**TEAM[1], **change}]
    nodes[1] = {key: value for key, value in nodes[1].items() if value is not None}
    with pytest.raises(WorkflowError) as raised:
        load_workflow(write(tmp_path, nodes))
    assert message in str(raised.value) and str(tmp_path / "wf.yaml") in str(raised.value)


def test_a_program_that_reflects_needs_its_reflecting_role_and_an_unknown_builtin_is_named(tmp_path):
    node = {"id": "solve", "op": "program", "prompt": "actor", "repair": "reflect"}
    with pytest.raises(WorkflowError, match="repair: reflect needs `reflect_role`"):
        load_workflow(write(tmp_path, [node]))
    with pytest.raises(WorkflowError, match=r"no built-in workflow 'swarm'; known: \['explorer', 'one_turn'"):
        builtin_workflow("swarm")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_a_workflow_of_ones_own_runs_its_nodes_on_the_notes_of_their_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    document = write(tmp_path, [
        {"id": "plan", "op": "generate", "role": "planner", "prompt": "planner", "heading": "Plan"},
        {"id": "solve", "op": "program", "role": "modeler", "prompt": "selfdebug", "repair": "debug",
         "inputs": ["plan"]},
        {"id": "check", "op": "verify"}])
    script = [Turn(content="1. Read data/x.csv.\n2. Average x."), Turn(content=f"```python\n{MEAN_CODE}```")]
    options = {key: value for key, value in llm_options("http://unused/v1").items() if key != "strategy"}
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path / "run", options | {"base_url": server.base_url, "workflow": str(document)})
    assert (ran.record.answer_text, [call.role for call in ran.record.usage.calls]) == ('{"answer": 2.5}',
                                                                                        ["planner", "modeler"])
    task = server.requests[1].body["messages"][1]["content"]
    assert task.endswith("## Plan\n1. Read data/x.csv.\n2. Average x.")
    assert ran.record.stdout.endswith("scibench-llm stop: done\n")


COMPOSING = """```yaml
name: again
nodes:
  - {id: explore, op: compose, role: explorer, prompt: explorer}
```"""
COMPOSED = """My team:
```yaml
name: plan_and_solve
nodes:
  - {id: plan, op: generate, role: planner, prompt: planner, heading: Plan}
  - {id: solve, op: program, role: modeler, prompt: one_turn, inputs: [plan]}
```"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_the_explorer_composes_a_workflow_for_the_query_and_runs_it(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)
    script = [Turn(content=COMPOSING), Turn(content=COMPOSED), Turn(content="1. Read data/x.csv.\n2. Average x."),
              Turn(content=f"```python\n{MEAN_CODE}```")]
    options = {key: value for key, value in llm_options("http://unused/v1").items() if key != "strategy"}
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path / "run", options | {"base_url": server.base_url, "strategy": "explorer"})
    assert (ran.record.answer_text, [call.role for call in ran.record.usage.calls]) == (
        '{"answer": 2.5}', ["explorer", "explorer", "planner", "modeler"])
    first = server.requests[0].body["messages"]
    assert "# Workflow documents" in first[0]["content"] and first[1]["content"].startswith("# Task (prompt.md)")
    assert "a composed workflow may not compose again" in server.requests[1].body["messages"][-1]["content"]
    assert server.requests[3].body["messages"][1]["content"].endswith("## Plan\n1. Read data/x.csv.\n2. Average x.")
    assert "explore: runs 'plan_and_solve' (plan, solve)" in ran.record.stdout


def test_a_workflows_folder_gives_each_task_its_document_and_keys_the_agent_by_all_of_them(tmp_path):
    folder = tmp_path / "learned"
    (folder / "workflows").mkdir(parents=True)
    (folder / "workflows" / "a.yaml").write_text(yaml.safe_dump({"name": "plan_first", "nodes": TEAM}))
    (folder / "workflows" / "b.yaml").write_text((BUILTIN / "one_turn.yaml").read_text())
    (folder / "index.json").write_text(json.dumps({"task-a": "workflows/a.yaml", "task-b": "workflows/b.yaml",
                                                   "task-c": "../outside.yaml"}))
    options = Options.model_validate({"model": "m", "base_url": "http://x/v1", "workflows": str(folder)})
    assert [options.load_workflow(task).name for task in ("task-a", "task-b")] == ["plan_first", "one_turn"]
    with pytest.raises(ValueError, match="no workflow for task 'task-d'"):
        options.load_workflow("task-d")
    with pytest.raises(ValueError, match="task 'task-c' names '../outside.yaml', outside the folder"):
        options.load_workflow("task-c")
    (folder / "index.json").write_text(json.dumps({"task-a": "workflows/a.yaml", "task-b": "workflows/b.yaml"}))
    before = options.identity()
    (folder / "workflows" / "b.yaml").write_text(yaml.safe_dump({"name": "plan_first", "nodes": TEAM}))
    assert options.identity() != before and set(options.identity()["workflows"]) == {"task-a", "task-b"}
    with pytest.raises(ValueError, match="names one of a built-in `strategy`, a `workflow` document or a"):
        Options.model_validate({"model": "m", "base_url": "http://x/v1", "workflows": str(folder),
                                "strategy": "react"})


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_verify_checks_the_artifact_against_the_prompts_artifact_block(tmp_path, monkeypatch):
    from scibench_testing.limits import limits_with
    from scibench_testing.optimize import PREDICTING_CODE, graded_pools
    from scibench_testing.project import ROOT

    from stages.evaluation.agents.identity import setup_agent
    from stages.evaluation.harness import evaluate_query
    from stages.params import AgentParams

    monkeypatch.setenv(KEY_ENV, API_KEY)
    benchmark = graded_pools(tmp_path / "benchmark")
    document = write(tmp_path, [{"id": "first", "op": "program", "role": "modeler", "prompt": "one_turn"},
                                {"id": "check", "op": "verify", "heading": "Check"},
                                {"id": "fix", "op": "program", "role": "modeler", "prompt": "one_turn",
                                 "inputs": ["check"]}])
    renamed = PREDICTING_CODE.replace('"qsim_mm_d":', '"qsim":')
    script = [Turn(content=f"```python\n{renamed}```"), Turn(content=f"```python\n{PREDICTING_CODE}```")]
    options = {key: value for key, value in llm_options("http://unused/v1").items() if key != "strategy"}
    rows = pd.read_parquet(benchmark / "queries.parquet").set_index("query_id", drop=False)
    with ScriptedLLM(script) as server:
        agent = setup_agent("verifying", AgentParams(kind="llm", options=options | {
            "base_url": server.base_url, "workflow": str(document)}))
        record = evaluate_query(rows.loc["q-val"].to_dict(), agent, benchmark, "graded", limits_with(wall_seconds=60),
                                [ROOT], 0, artifacts=tmp_path / "artifacts")
    told = server.requests[1].body["messages"][1]["content"]
    assert told.endswith("## Check\nThe hand-in is not right as it is: work/predictions.parquet lacks the "
                         "declared columns ['qsim_mm_d'].")
    assert record.artifact_sha256 is not None and record.exit_code == 0


def test_the_medoid_is_the_answer_closest_to_the_others():
    from stages.evaluation.agents.llm.ensemble import medoid, numbers

    assert numbers({"metrics": {"nse": 0.5, "ok": True, "bad": float("nan")}, "list": [1, "x"]}) == {
        "metrics.nse": 0.5, "list.0": 1.0}
    # 0.5 and 0.55 agree; 0.9 is the outlier: 0.55 is closest to both others
    assert medoid([{"nse": 0.5}, {"nse": 0.9}, {"nse": 0.55}]) == 2
    assert medoid([None, {"nse": 0.2}, None]) == 1 and medoid([None, None]) == 0
    assert medoid([{"a": 1.0}, {"a": 1.0}]) == 0  # a tie: the first


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_the_ensemble_hands_in_the_sample_that_agrees_most_with_the_others(tmp_path, monkeypatch):
    from scibench_testing.limits import limits_with
    from scibench_testing.optimize import PREDICTING_CODE, ZEROS, graded_pools
    from scibench_testing.project import ROOT

    from stages.evaluation.agents.identity import setup_agent
    from stages.evaluation.harness import evaluate_query
    from stages.params import AgentParams

    monkeypatch.setenv(KEY_ENV, API_KEY)
    benchmark = graded_pools(tmp_path / "benchmark")
    document = write(tmp_path, [{"id": "vote", "op": "ensemble", "role": "modeler", "prompt": "one_turn",
                                 "samples": 3}])
    samples = [ZEROS.replace('"nse": 0.99', '"nse": 0.5'), ZEROS.replace('"nse": 0.99', '"nse": 0.9'),
               PREDICTING_CODE.replace('"nse": 0.99', '"nse": 0.55')]
    options = {key: value for key, value in llm_options("http://unused/v1").items() if key != "strategy"}
    rows = pd.read_parquet(benchmark / "queries.parquet").set_index("query_id", drop=False)
    with ScriptedLLM([Turn(content=f"```python\n{code}```") for code in samples]) as server:
        agent = setup_agent("voting", AgentParams(kind="llm", options=options | {
            "base_url": server.base_url, "workflow": str(document)}))
        record = evaluate_query(rows.loc["q-val"].to_dict(), agent, benchmark, "graded", limits_with(wall_seconds=60),
                                [ROOT], 0, artifacts=tmp_path / "artifacts")
    assert json.loads(record.answer_text)["metrics"]["nse"] == 0.55
    assert "ensemble: sample 3 of 3 run handed in" in record.stdout
    predictions = pd.read_parquet(tmp_path / "artifacts" / record.artifact_sha256)
    assert predictions["qsim_mm_d"].tolist() == [1.0, 2.0, 3.0, 5.0, 3.0, 4.0, 6.0, 8.0]  # the third sample's file


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_a_composed_workflow_cannot_spend_past_the_agents_bounds(tmp_path, monkeypatch):
    """An explorer that composes a million-sample ensemble is stopped at max_turns (8 calls in all)."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    greedy = "```yaml\nname: greedy\nnodes:\n  - {id: vote, op: ensemble, prompt: one_turn, samples: 1000000}\n```"
    script = [Turn(content=greedy)] + [Turn(content=f"```python\n{MEAN_CODE}```")] * 20
    options = {key: value for key, value in llm_options("http://unused/v1").items() if key != "strategy"}
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path / "run", options | {"base_url": server.base_url, "strategy": "explorer"})
    assert len(server.requests) == 8 and len(ran.record.usage.calls) == 8
    assert ran.record.agent_limit == "max_turns" and ran.record.answer_text == '{"answer": 2.5}'
