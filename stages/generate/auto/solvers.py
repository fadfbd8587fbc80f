"""Who attempts the loop's tasks: the offline heuristic, any configured evaluation agent, the floors.

- `heuristic_solver` (the offline default) is the benchmark's own code run in the harness process,
  as the reference models are: the template's analysis on the table as given, after the cleaning
  it spots.
- `AgentSolver` runs any agent of params.yaml `agents:` (an LLM agent, an external command) on the
  staged task in the sandbox, exactly as the evaluation flow runs it on a catalog query, and
  grades what it hands in with the catalog's hypothesis path. A harness-side failure (the sandbox,
  the model API) is an `InfraError`, which the judge does not count; without bubblewrap the solver
  is refused when it is made.
- `FloorGate` runs the data-free floors (nodata, fabricate, defensive) on a task; a task one of
  them passes measures no analysis, and the judge refuses it naming the floor. A floor that cannot
  run stops the loop (an unchecked task is never kept).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from stages import sandbox
from stages.evaluation.agents import AGENTS, QueryContext
from stages.evaluation.harness import run_attempt
from stages.generate.auto import staged
from stages.generate.auto.hiding import undo
from stages.generate.auto.loop import InfraError, Task
from stages.generate.sda.dataset import Simulation
from stages.generate.sda.instances import derived
from stages.generate.sda.templates import TEMPLATES, Context
from stages.hashing import content_hash
from stages.params import AgentParams
from stages.sandbox import Limits, debris


def heuristic_solver(task: Task, trial: int) -> float | str | None:
    """The offline default: the template's own analysis on the table as given, after some cleaning.

    It undoes what it spots (the stated calibration and the coded missing values, each remembered
    with probability 0.7 per trial; duplicated records are never looked for). It cannot intervene,
    so for a causal question it gives the observational estimate (the template's confusion).
    """
    rng = np.random.default_rng([trial, int(content_hash(task.question, 8), 16)])
    known = [name for name in task.recipe.hiding if name != "duplicated_records" and rng.uniform() < 0.7]
    cleaned = undo(task.table, task.column, " ".join(task.notes), known).drop(columns="instrument", errors="ignore")
    context = Context(task.context.scenario, Simulation({}, cleaned, task.context.simulation.hidden))
    template = TEMPLATES[task.recipe.template]
    binding = task.binding
    if template.task_type == "causal":
        naive = template.confusion(context, binding)
        binding = naive[0] if naive else binding
    return derived(template, context, binding)


class AgentSolver:
    """A configured evaluation agent as the loop's solver: one sandboxed run per trial."""

    def __init__(self, name: str, params: AgentParams, limits: Limits, hidden: list[Path],
                 unsafe_no_sandbox: bool = False):
        if params.kind not in AGENTS:
            raise KeyError(f"agent {name}: unknown kind {params.kind!r}; known: {sorted(AGENTS)}")
        if not (sandbox.bwrap_available() or unsafe_no_sandbox):  # refused now, not as K failed trials
            raise sandbox.SandboxUnavailable(f"agent {name}: bubblewrap (bwrap) is not installed: install it with"
                                             f" `{sandbox.INSTALL_HINT}`")
        self.name, self.params, self.limits, self.unsafe = name, params, limits, unsafe_no_sandbox
        self.hidden = hidden  # the project root: nothing of it is visible in the sandbox

    def attempt(self, task: Task, trial: int) -> str | None:
        """The text of the `answer.json` the agent wrote (None when it wrote none)."""
        with tempfile.TemporaryDirectory(prefix=debris.temp_prefix("generated")) as scratch:
            public, private = Path(scratch) / "public", Path(scratch) / "private"
            staged.stage(task, public)
            private.mkdir()
            query = QueryContext(content_hash([staged.prompt(task), trial], 16), "generated", private)
            program = AGENTS[self.params.kind](self.params.options, query)
            attempt, _ = run_attempt(staged.prompt(task), public, program, self.limits, self.hidden, self.unsafe,
                                     collect=())
        if attempt.infra_error is not None:
            raise InfraError(f"{self.name}: {attempt.infra_error}")
        return attempt.answer_text

    def __call__(self, task: Task, trial: int) -> float | str | None:
        """The value the agent handed in (None: missing, malformed or unrealistic)."""
        return staged.handed_in(task, self.attempt(task, trial))


class FloorGate:
    """Refuses a task any data-free floor agent passes; remembers verdicts by prompt (floors read only it)."""

    def __init__(self, floors: dict[str, AgentSolver]):
        self.floors, self.seen = floors, {}

    def __call__(self, task: Task) -> str | None:
        """Why the task is refused (the floor that passed it), or None."""
        key = content_hash([staged.prompt(task), task.gold])
        if key not in self.seen:
            self.seen[key] = next((f"passed by the data-free {name} agent" for name, floor in self.floors.items()
                                   if staged.graded(task, floor.attempt(task, 0))), None)
        return self.seen[key]  # a floor that cannot run raises InfraError: the loop stops rather than guess
