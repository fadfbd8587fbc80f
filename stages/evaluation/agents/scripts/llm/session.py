"""One query's loop state: its options, the model, the wall clock, and the runs of the model's code."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .chat import Chat, Stop
from .execute import Ran, describe, run_code

CONFIG_ENV = "SCIBENCH_LLM_CONFIG"
SOCKET_ENV = "SCIBENCH_LLM_SOCKET"


@dataclass(frozen=True)
class Config:
    """The options the harness passes to the loop (see stages/evaluation/agents/llm/options.py)."""

    strategy: str
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
    task: str  # prompt.md
    runs: list[Ran] = field(default_factory=list)

    def run(self, code: str) -> Ran:
        """Run the model's code within the code timeout and what is left of the wall budget."""
        timeout = min(self.config.code_timeout_s, self.chat.remaining())
        if timeout <= 0:
            raise Stop("wall_budget")
        ran = run_code(code, timeout, self.config.tool_output_chars)
        self.runs.append(ran)
        print(f"  code run {len(self.runs)}: exit {ran.exit_code} in {ran.seconds} s", flush=True)
        return ran

    def report(self, ran: Ran) -> str:
        """What the model reads about a run."""
        timeout = min(self.config.code_timeout_s, max(self.chat.remaining(), 0))
        return describe(ran, timeout, self.config.tool_output_chars)

    def exit_code(self) -> int:
        """The loop's exit code: that of the last code run (0 when none ran; 1 when it was killed)."""
        if not self.runs:
            return 0
        last = self.runs[-1].exit_code
        if last is None:
            return 1
        return 128 - last if last < 0 else min(last, 125)  # killed by signal N: 128 + N


def open_session() -> Session:
    """The session the environment describes; the wall budget starts now."""
    config = Config(**json.loads(os.environ[CONFIG_ENV]))
    chat = Chat(os.environ.get(SOCKET_ENV, "/llm/llm.sock"), config.model, config.max_turns,
                time.monotonic() + config.wall_budget_s)
    return Session(config, chat, Path("prompt.md").read_text(errors="replace"))
