"""The heuristic agent through the real sandbox on a tiny built camels benchmark.

Synthetic basins go through ingest, align and staging; the heuristic runs on one query of every
task and what it hands in is graded as the harness does: it must beat the reference agents.
"""

from __future__ import annotations

import io
import json
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import CATALOG, KEY, run_reproduce
from scibench_testing.domains import synthesize_and_ingest
from scibench_testing.heuristic_workspaces import write_workspace
from scibench_testing.limits import limits_with
from scibench_testing.project import TINY_TASKS

from stages.align import align
from stages.catalog import load_catalog
from stages.catalog_scopes import ScopeSpec
from stages.construction.drawing import Query, extract_tables
from stages.construction.prompts import render_prompt
from stages.construction.scopes import resolve_scope
from stages.construction.staging import stage_query, stage_task
from stages.evaluation.agents import AGENTS, QueryContext
from stages.evaluation.program import AgentProgram
from stages.evaluation.runner import run_query
from stages.repository import read_manifest, read_table
from stages.sandbox import bwrap_available
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.recompute import recompute
from stages.scoring.query.scorer import Grading, score_query
from stages.synthesize import camels_us as camels_synth

REFERENCE_AGENTS = ["climatology", "linear_forcing", "interpolate", "region_partition", "mean_flow_split"]


@pytest.fixture(scope="module")
def camels_tasks():
    return {task.spec.id: task for task in load_catalog(CATALOG, ["camels"]) if task.spec.id in TINY_TASKS}


# --- through the real sandbox on a tiny built benchmark -------------------------------------------


@pytest.fixture(scope="module")
def tiny_benchmark(camels_tasks, tmp_path_factory) -> dict[str, tuple[Query, Path, Path]]:
    """Per camels task, one query over 6 of 8 synthetic basins, 2000-2002, staged as the build does."""
    root = tmp_path_factory.mktemp("camels")
    synthesize_and_ingest("camels_us", camels_synth.Params(n_basins=8, first_year=2000, last_year=2003), root)
    align("camels", ["camels_us"], root / "sources", root / "repository")
    repository = root / "repository"
    entities = read_table(repository, "entities")
    spec = ScopeSpec(name="sample_6_seed1", kind="sample_size", description="6 basins drawn at random",
                     years=(2000, 2002), sample=6, seed=1)
    out = {}
    for task_id, task in camels_tasks.items():
        scope = resolve_scope(spec, entities, KEY, date(2000, 1, 1), date(2003, 12, 31),
                              task.spec.min_entities, task.spec.min_years)
        query = Query(task.query_id(scope.block()), task_id, task.task_hash,
                      scope.name, scope.kind, scope.citation, len(scope.entities), scope.start,
                      scope.end, render_prompt(task.spec, scope), scope.entities)
        stage_task(task, root / task_id)
        public = stage_query(task, extract_tables(task, repository), read_manifest(repository)["entity_key"],
                             query, root / task_id)
        out[task_id] = (query, public, root / task_id / "private" / query.query_id)
    return out


def sandboxed_score(agent: str, task, query: Query, public: Path, private: Path, gold: dict) -> float:
    """Run a configured agent kind in the sandbox on one query and score it as the harness does."""
    options = {"baseline": agent} if agent in REFERENCE_AGENTS else {}
    program = AGENTS["reference" if options else agent](options, QueryContext(query.query_id, task.spec.id, private))
    artifact = task.spec.artifact.file if task.spec.artifact is not None else None
    attempt = run_query(query.prompt, public, program, limits_with(wall_seconds=120, cpu_seconds=120), hidden=[],
                        collect=(artifact,) if artifact else ())
    execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error, attempt.answer_text)
    if artifact is not None:
        collected = attempt.files.get(artifact)
        data = collected.data if collected is not None and not collected.missing else None
        execution = recompute(task.spec, execution, data, None, pd.read_parquet(private / "truth.parquet"),
                              pd.read_parquet(private / "required.parquet"), KEY).execution
    references = json.loads((private / "references.json").read_text()) if artifact else {}
    return score_query(task.spec.answer, execution, gold, Grading(references)).pass_rate


@pytest.mark.slow  # ~40 s; the end-to-end test's validity gates check the same on the same five tasks
@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed: the sandbox cannot run")
def test_in_the_sandbox_the_heuristic_beats_every_reference_agent(camels_tasks, tiny_benchmark, tmp_path):
    scores: dict[str, dict[str, float]] = {}
    for task_id, (query, public, private) in tiny_benchmark.items():
        task = camels_tasks[task_id]
        gold = {"metrics": {}}
        if task.spec.artifact is None:  # a hypothesis: the gold is the annotator's answer
            workspace = write_workspace(tmp_path / task_id, query.prompt, {})
            (workspace / "data").rmdir()
            (workspace / "data").symlink_to(public)
            gold = json.loads(run_reproduce(task, workspace).answer)
        agents = ["heuristic", *[a for a in REFERENCE_AGENTS if a in task.spec.reference_models]]
        scores[task_id] = {a: sandboxed_score(a, task, query, public, private, gold) for a in agents}
    for task_id, by_agent in scores.items():
        best_reference = max([v for a, v in by_agent.items() if a != "heuristic"], default=0.0)
        assert by_agent["heuristic"] >= 0.5 > best_reference, (task_id, scores)
    assert np.mean([by_agent["heuristic"] for by_agent in scores.values()]) >= 0.8, scores


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed: the sandbox cannot run")
def test_a_reference_model_hands_in_the_same_artifact_in_process_as_in_the_sandbox(camels_tasks, tiny_benchmark):
    """The reference agents run in the harness process by default; `sandbox: true` runs the same
    function in the sandbox. Both must hand in the same answer and the same artifact rows."""
    compared = 0
    for task_id, (query, public, private) in tiny_benchmark.items():
        task = camels_tasks[task_id]
        if task.spec.artifact is None:
            continue
        artifact = task.spec.artifact.file
        for model in task.spec.reference_models:
            attempts = {}
            for sandbox in (True, False):
                program = AGENTS["reference"]({"baseline": model, "sandbox": sandbox},
                                              QueryContext(query.query_id, task_id, private))
                assert (program.in_process is None) == sandbox
                attempts[sandbox] = run_query(query.prompt, public, program,
                                              limits_with(wall_seconds=120, cpu_seconds=120), hidden=[],
                                              collect=(artifact,))
            sandboxed, in_process = attempts[True], attempts[False]
            assert (sandboxed.exit_code, in_process.exit_code) == (0, 0), (task_id, model, in_process.stderr)
            assert in_process.answer_text == sandboxed.answer_text == '{"metrics": {}}'
            frames = [pd.read_parquet(io.BytesIO(run.files[artifact].data)) for run in (sandboxed, in_process)]
            pd.testing.assert_frame_equal(*frames)
            compared += 1
    assert compared >= 4


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not installed: the sandbox cannot run")
def test_the_heuristic_and_the_floors_hand_in_the_same_bytes_warm_and_cold(camels_tasks, tiny_benchmark):
    """`warm: true` runs the benchmark's own scripts in a warm pool: the hand-ins must not change."""
    from stages.sandbox import pools

    graded = next(t for t in sorted(tiny_benchmark) if camels_tasks[t].spec.artifact is not None)
    hypothesis = next(t for t in sorted(tiny_benchmark) if camels_tasks[t].spec.artifact is None)
    compared = []
    try:
        for task_id in (graded, hypothesis):
            (query, public, private), artifact = tiny_benchmark[task_id], camels_tasks[task_id].spec.artifact
            collect = (artifact.file,) if artifact is not None else ()
            for kind in ("heuristic", "nodata", "fabricate", "defensive", "prior"):
                runs = {}
                for warm in (True, False):
                    program = AGENTS[kind]({"warm": warm}, QueryContext(query.query_id, task_id, private.parent))
                    assert (program.warm is not None) == warm
                    runs[warm] = run_query(query.prompt, public, program,
                                           limits_with(wall_seconds=120, cpu_seconds=120), hidden=[], collect=collect)
                assert runs[True].exit_code == runs[False].exit_code == 0, (task_id, kind, runs[True].stderr)
                assert runs[True].answer_text == runs[False].answer_text, (task_id, kind)
                assert {n: f.data for n, f in runs[True].files.items()} == \
                    {n: f.data for n, f in runs[False].files.items()}, (task_id, kind)
                compared.append(kind)
    finally:
        pools.close_all()
    assert len(compared) == 10


def test_a_failing_in_process_reference_model_fails_its_query_with_the_traceback(tmp_path):
    def broken(workspace: Path) -> None:
        (workspace / "work" / "answer.json").write_text("{}")
        raise ValueError("no forcing columns")

    public = tmp_path / "public"
    public.mkdir()
    attempt = run_query("prompt", public, AgentProgram(argv=["unused"], in_process=broken),
                        limits_with(wall_seconds=5), hidden=[])
    assert attempt.exit_code == 1
    assert "ValueError: no forcing columns" in attempt.stderr
    assert attempt.answer_text == "{}"  # what it wrote before failing is taken, as from a sandbox
