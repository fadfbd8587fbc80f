"""Built-in agents: the oracle (upper bound and self-check), the floors, references and heuristic.

- `oracle` runs the task's annotator reproduction script, exactly as the construction flow did
  (with `reuse_verify: true`, it is graded on the construction's verify run of that script instead).
- `nodata` (MoSciBench's NoDataGuess) answers from the prompt alone, never opening `data/`.
- `defensive` writes zeros and -1 sentinels; the realistic filter must score it 0.
- `fabricate` invents plausible numbers and artifacts from the prompt alone, never opening `data/`.
- `reference` hands in what one standard baseline of the task's category predicts
  (`options: {baseline: climatology}`; see `scripts/reference_models/`).
- `heuristic` is a non-LLM data scientist: it profiles `data/`, picks the standard method of the
  task's family from the prompt's blocks, fits it and reports metrics it validated itself
  (`scripts/heuristic/`).

These scripts are the benchmark's own code: with option `warm: true`, the heuristic and the floors
run in a warm pool (`AgentProgram.warm`: a fresh workspace per query, seeing only its files, in a
long-lived sandbox whose interpreter imported what the script imports). The hand-in is the same
bytes, so `warm` is not part of an agent's identity (`stages.evaluation.agents.identity.setup_agent`).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

from stages.catalog import HARNESS_METRICS
from stages.evaluation.program import AgentProgram, QueryContext, directory_hash
from stages.hashing import file_sha256
from stages.layout import verify_run_dir
from stages.yamlfile import read_yaml

SCRIPTS = Path(__file__).parent / "scripts"
HEURISTIC_METRICS = "/scoring"  # where the heuristic finds the harness's `metrics` module (heuristic/metrics.py)
RUN_OPTIONS = ("warm",)  # how a built-in agent runs, not what it hands in: never keys its records


@functools.cache
def _preload(paths: tuple[Path, ...]) -> tuple[str, ...]:
    from stages.sandbox.pools import imports_of

    return imports_of(paths)


def _warm(options: dict, *scripts: Path) -> tuple[str, ...] | None:
    """What a warm pool preloads for these scripts (None: run cold; see `AgentProgram.warm`)."""
    return _preload(scripts) if options.get("warm", False) else None


def oracle(options: dict, query: QueryContext) -> AgentProgram:
    """Run the private reproduce.py of the query's task (mounted alone at /agent).

    With option `reuse_verify: true`, the hand-in of the query's verify run at construction (this
    script on these files) is graded instead, when the benchmark kept one.
    """
    kept = verify_run_dir(query.private_dir, query.query_id) if options.get("reuse_verify", False) else None
    return AgentProgram(
        argv=[sys.executable, "/agent/reproduce.py"],
        agent_dir=query.private_dir / "annotator",
        kept_run=kept,
        transcript=False,  # the annotator's script sees the private files: nothing of its run is kept
    )


def nodata(options: dict, query: QueryContext) -> AgentProgram:
    """Answer with no-skill values read from the prompt's answer-format block."""
    return AgentProgram(argv=[sys.executable, "/agent/nodata.py", "/workspace"], agent_dir=SCRIPTS,
                        warm=_warm(options, SCRIPTS / "nodata.py"))


def prior(options: dict, query: QueryContext) -> AgentProgram:
    """Answer a hypothesis with the task's declared domain-knowledge prior, never reading data/.

    The prior is read here, on the harness side, from the task's private spec (an agent never sees
    it) and handed to the script on its command line.
    """
    spec = read_yaml(query.private_dir / "task.yaml")
    value = ((spec.get("answer") or {}).get("hypothesis") or {}).get("prior")
    return AgentProgram(argv=[sys.executable, "/agent/prior.py", "/workspace", json.dumps(value)],
                        agent_dir=SCRIPTS, warm=_warm(options, SCRIPTS / "prior.py", SCRIPTS / "nodata.py"))


def defensive(options: dict, query: QueryContext) -> AgentProgram:
    """Answer zeros and -1 sentinels in the declared shape."""
    return AgentProgram(argv=[sys.executable, "/agent/defensive.py", "/workspace"], agent_dir=SCRIPTS,
                        warm=_warm(options, SCRIPTS / "defensive.py"))


def fabricate(options: dict, query: QueryContext) -> AgentProgram:
    """Invent plausible metrics and artifacts without reading data/."""
    return AgentProgram(argv=[sys.executable, "/agent/fabricate.py", "/workspace"], agent_dir=SCRIPTS,
                        warm=_warm(options, SCRIPTS / "fabricate.py"))


def reference(options: dict, query: QueryContext) -> AgentProgram:
    """Run one reference model (option `baseline`) on the query's public data.

    The model is the benchmark's own code, so it runs in the harness process on the query's
    workspace (the same files and function as in the sandbox, without its start-up); with
    `sandbox: true` it runs in the sandbox like any agent.
    """
    from stages.evaluation.agents.scripts import reference_models  # numpy/pandas only when used

    model = options.get("baseline")
    if model not in reference_models.MODELS:
        raise KeyError(f"reference agent: unknown model {model!r}; known: {sorted(reference_models.MODELS)}")
    in_process = None if options.get("sandbox", False) else functools.partial(reference_models.hand_in, model)
    return AgentProgram(
        argv=[sys.executable, "/agent/reference.py", model, "/workspace"], agent_dir=SCRIPTS,
        in_process=in_process,
    )


def heuristic(options: dict, query: QueryContext) -> AgentProgram:
    """Run the heuristic data scientist (`scripts/heuristic_agent.py`, the `heuristic` package beside it).

    It validates its candidates with the harness's own metric definitions, bound read-only at
    `HEURISTIC_METRICS` (their folder holds the grader's code, which is public; no truth is there).
    """
    return AgentProgram(argv=[sys.executable, "/agent/heuristic_agent.py", "/workspace"], agent_dir=SCRIPTS,
                        ro_binds={HARNESS_METRICS.parent: HEURISTIC_METRICS},
                        warm=_warm(options, SCRIPTS / "heuristic"))


def heuristic_identity(options: dict) -> dict:
    """What keys the heuristic's journal records: its options and its code (a new method re-runs)."""
    return {"options": options, "code": directory_hash(SCRIPTS / "heuristic"),
            "metrics": file_sha256(HARNESS_METRICS)}
