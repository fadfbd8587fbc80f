"""One query's loop state: its options, the model, the wall clock, the kernel and the runs of the model's code."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import dataclass, field

import pyarrow.parquet as pq

from stages.catalog_scopes import read_prompt_block
from stages.evaluation.agents.llm.chat import Chat, Stop
from stages.evaluation.agents.llm.workflows import Workflow
from stages.evaluation.transcript import CodeRun, capped
from stages.sandbox.kernel import CellResult, Kernel, StartingKernel
from stages.sandbox.workspace import ANSWER_FILE, MAX_ANSWER_BYTES, MAX_ARTIFACT_BYTES


@dataclass(frozen=True)
class Config:
    """The options a loop runs with (see options.py)."""

    workflow: Workflow  # what the loop runs (workflows/)
    model: str
    max_turns: int = 20
    max_rounds: int = 5
    tool_output_chars: int = 16_384
    wall_budget_s: float = 540.0
    code_timeout_s: float = 120.0
    scaffold: bool = False
    domain: str | None = None  # set when the domain-knowledge variant is on


@dataclass
class Session:
    """What every strategy works with."""

    config: Config
    chat: Chat
    kernel: Kernel | StartingKernel  # a kernel, or one still starting (runner.run_loop)
    task: str  # prompt.md
    log: list[str] = field(default_factory=list)  # the loop's own record, kept as the attempt's stdout
    events: list = field(default_factory=list)  # the transcript's (stages/evaluation/transcript.py)
    runs: list[CellResult] = field(default_factory=list)

    def say(self, line: str) -> None:
        """Add a line to the loop's record."""
        self.log.append(line)

    async def run(self, code: str) -> CellResult:
        """Run the model's code as the kernel's next cell, within the code timeout and the wall budget."""
        timeout = min(self.config.code_timeout_s, self.chat.remaining())
        if timeout <= 0:
            raise Stop("wall_budget")
        ran = await asyncio.get_running_loop().run_in_executor(
            None, self.kernel.run, code, timeout, self.config.tool_output_chars)
        self.runs.append(ran)
        self.events.append(CodeRun(code=capped(code), stdout=ran.stdout, stderr=ran.stderr, exit_code=ran.exit_code,
                                   seconds=ran.seconds, restarted=ran.restarted, limits_hit=list(ran.limits_hit)))
        self.say(f"  code run {len(self.runs)}: exit {ran.exit_code} in {ran.seconds} s"
                 + (" (kernel restarted)" if ran.restarted else ""))
        return ran

    def report(self, ran: CellResult) -> str:
        """What the model reads about a run."""
        timeout = min(self.config.code_timeout_s, max(self.chat.remaining(), 0))
        return describe(ran, timeout, self.config.tool_output_chars)

    async def answer(self) -> tuple[dict | None, str | None]:
        """`work/answer.json` as the harness will read it: the JSON object, or None and why not."""
        taken = (await asyncio.get_running_loop().run_in_executor(
            None, self.kernel.read_work, ANSWER_FILE, MAX_ANSWER_BYTES + 1))
        if taken.missing:
            return None, "work/answer.json cannot be read: No such file or directory"
        if taken.data is None:
            return None, f"work/answer.json cannot be read: {taken.problem}"
        if len(taken.data) > MAX_ANSWER_BYTES:
            return None, f"work/answer.json is over {MAX_ANSWER_BYTES} bytes"
        try:
            answer = json.loads(taken.data)
        except ValueError as error:
            return None, f"work/answer.json is not valid JSON: {error}"
        return (answer, None) if isinstance(answer, dict) else (None, "work/answer.json is not a JSON object")

    async def answer_problem(self) -> str | None:
        """Why `work/answer.json` cannot be handed in as it is, or None when it is a JSON object."""
        return (await self.answer())[1]

    async def artifact_problem(self) -> str | None:
        """What is wrong with the artifact the prompt's `## Artifact` block declares, or None.

        As far as the file's footer shows: a readable Parquet file, the declared key and columns,
        some rows. None too when the task declares no artifact. Advice for the model only: the
        harness grades the file itself, against rows the model never sees.
        """
        try:
            block = read_prompt_block(self.task, "Artifact")
        except ValueError:
            return None
        taken = (await asyncio.get_running_loop().run_in_executor(
            None, self.kernel.read_work, block["file"], MAX_ARTIFACT_BYTES))
        name = f"work/{block['file']}"
        if taken.missing or taken.data is None:
            return f"{name} cannot be read: {taken.problem or 'No such file or directory'}"
        try:
            parquet = pq.ParquetFile(io.BytesIO(taken.data))
            names, rows = set(parquet.schema_arrow.names), parquet.metadata.num_rows
        except Exception as error:  # noqa: BLE001 - whatever the model wrote is its problem
            return f"{name} is not a readable Parquet file: {error}"
        missing = [column for column in [*block["key"], *block["columns"]] if column not in names]
        if missing:
            return f"{name} lacks the declared columns {missing}"
        return f"{name} has no rows" if rows == 0 else None

    def exit_code(self) -> int:
        """The loop's exit code: that of the last code run (0 when none ran; 1 when it was killed)."""
        if not self.runs:
            return 0
        last = self.runs[-1].exit_code
        return 1 if last is None else min(last, 125)


def describe(ran: CellResult, timeout: float, chars: int) -> str:
    """What the model reads about a run, at most about `chars` characters."""
    status = f"exit code {ran.exit_code}" if ran.exit_code is not None else f"killed after {timeout:.0f} s"
    if ran.restarted:
        status += "; the kernel was restarted: variables and imports are gone, files in work/ are kept"
    text = f"{status} ({ran.seconds:.1f} s)\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    return capped(text, chars)

