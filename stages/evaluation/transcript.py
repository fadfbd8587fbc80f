"""A query's transcript: every step an agent took, in order, kept so that anyone can see why it scored what it did.

Events: each model call (the messages it added to the conversation, the reply with its tool calls
and finish reason; its usage, latency and retries are the proxy's record of the same call, in
`JournalRecord.usage.calls`, in the same order), each run of the model's code (the code, what it
printed as the model saw it, exit status, duration, limits hit, whether the kernel restarted), the
loop's stop and its reason, and for an agent that runs whole in its sandbox its run's output
tails. The harness stores it content-addressed beside the artifacts
(`<runs>/<agent>/artifacts/<sha256>`, named by `JournalRecord.transcript_sha256`); grading is
joined to it when it is read (the report, the Inspect log).

What an agent sees is public by construction (the prompt, `data/`, what its own code printed), so a
transcript holds only that; the agents that see private files (the oracle runs the annotator's
script) keep none. Host paths do not appear: the model's code sees sandbox paths only.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

TEXT_CAP = 16_384  # characters of a message, a reply or an output kept in a transcript


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelTurn(_Event):
    """One call: what it added to the conversation and what came back."""

    kind: Literal["model"] = "model"
    role: str  # the loop's role (agent, planner, modeler, ...)
    sent: list[dict]  # the messages not in the previous call of this role's conversation
    reply: str = ""
    tool_calls: list[dict] = []
    finish_reason: str | None = None
    error: str | None = None  # the call ended the loop (a bound, the model API)


class CodeRun(_Event):
    """One run of the model's code (a kernel cell)."""

    kind: Literal["code"] = "code"
    code: str
    stdout: str
    stderr: str
    exit_code: int | None
    seconds: float
    restarted: bool = False
    limits_hit: list[str] = []


class Stop(_Event):
    """Why the loop ended."""

    kind: Literal["stop"] = "stop"
    reason: str
    detail: str = ""


class ProgramRun(_Event):
    """An agent that ran whole in its sandbox: its exit and output tails."""

    kind: Literal["program"] = "program"
    exit_code: int | None
    seconds: float
    stdout: str
    stderr: str
    limits_hit: list[str] = []


Event = Annotated[ModelTurn | CodeRun | Stop | ProgramRun, Field(discriminator="kind")]


class Transcript(BaseModel):
    """The events of one query's scored attempt, and what was handed in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query_id: str
    agent: str
    events: list[Event] = []
    handed_in: dict[str, str | None] = {}  # file in work/ -> sha256 of its bytes (None: not taken)

    def encode(self) -> bytes:
        """Its stored bytes: sorted-key ASCII JSON."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=True).encode()


def capped(text: str | None, cap: int = TEXT_CAP) -> str:
    """`text`, or its first and last `cap / 2` characters with a marker between.

    Used for transcripts, and for what an llm loop shows its model of a run.
    """
    text = text or ""
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"
