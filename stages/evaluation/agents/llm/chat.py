"""The model as a loop sees it: one call at a time through the query's proxy, and the loop's reasons to stop.

Every call carries the caller's role (`X-Scibench-Role`) so the harness can count usage per role,
and the query's token (`X-Scibench-Query`) so the shared client's transport finds its proxy
(client.py). The proxy answers a call past a bound with HTTP 403 `scibench_budget_exhausted` (the
bound in `code`) and a failed model API with 503 `scibench_model_unavailable`; both end the loop,
as do a reply cut at `max_tokens` (`finish_length`), the loop's own turn and wall-clock bounds, and
a request the model server refused (`request_rejected`, e.g. a context too long).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import openai

from stages.evaluation.agents.llm.client import QUERY_HEADER, ROLE_HEADER, shared_client
from stages.evaluation.transcript import ModelTurn, capped

BUDGET_ERROR = "scibench_budget_exhausted"
UNAVAILABLE_ERROR = "scibench_model_unavailable"
WALL_MARGIN_S = 2.0


class Stop(Exception):
    """The loop stops here; `reason` names why (a bound, or the model API failing)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """One assistant message."""

    content: str
    tool_calls: list[dict] = field(default_factory=list)  # {id, type, function: {name, arguments}}
    finish_reason: str | None = None

    def message(self) -> dict:
        """The message to append to the conversation."""
        # Content may be null only beside tool calls (servers reject an assistant message without both).
        message: dict = {"role": "assistant", "content": self.content or (None if self.tool_calls else "")}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class Chat:
    """Chat completions through the query's proxy, within the loop's turn and wall-clock bounds."""

    def __init__(self, token: str, model: str, max_turns: int, deadline: float, log, events: list):
        self.token, self.model, self.max_turns, self.deadline, self.log = token, model, max_turns, deadline, log
        self.events = events  # the transcript's (stages/evaluation/transcript.py)
        self._sent: dict[str, list[dict]] = {}  # per role, the conversation as last sent
        self.calls = 0

    def remaining(self) -> float:
        """Seconds left of the wall budget, less a margin for handing in."""
        return self.deadline - time.monotonic() - WALL_MARGIN_S

    async def complete(self, messages: list[dict], role: str, tools: list[dict] | None = None) -> Reply:
        """One call; raises `Stop` at a bound, a failed model API or a reply cut at max_tokens."""
        if self.calls >= self.max_turns:
            raise Stop("max_turns")
        if self.remaining() <= 0:
            raise Stop("wall_budget")
        self.calls += 1
        extra = {"tools": tools} if tools else {}
        sent = self._new_messages(role, messages)
        try:
            response = await asyncio.wait_for(shared_client().chat.completions.create(
                model=self.model, messages=messages,
                extra_headers={ROLE_HEADER: role, QUERY_HEADER: self.token}, **extra), self.remaining())
        except (openai.APITimeoutError, TimeoutError):
            stop = Stop("wall_budget", "no reply before the wall budget ran out")
        except openai.APIStatusError as error:
            stop = _stop_for(error)
        except openai.APIConnectionError as error:
            stop = Stop("model_unavailable", str(error))
        else:
            stop = None
        if stop is not None:
            self.events.append(ModelTurn(role=role, sent=sent, error=str(stop)))
            raise stop
        choice = response.choices[0]
        calls = [{"id": call.id, "type": "function",
                  "function": {"name": call.function.name, "arguments": call.function.arguments}}
                 for call in (choice.message.tool_calls or []) if getattr(call, "function", None)]
        reply = Reply(choice.message.content or "", calls, choice.finish_reason)
        self.events.append(ModelTurn(role=role, sent=sent, reply=capped(reply.content), tool_calls=calls,
                                     finish_reason=reply.finish_reason))
        self.log(f"[{role}] call {self.calls}: finish {reply.finish_reason}, {len(calls)} tool calls, "
                 f"{self.remaining():.0f} s left")
        if reply.finish_reason == "length":
            raise Stop("finish_length")
        return reply


    def _new_messages(self, role: str, messages: list[dict]) -> list[dict]:
        """The messages of this call that the last call of `role` did not send (capped)."""
        last = self._sent.get(role, [])
        common = next((n for n, (a, b) in enumerate(zip(last, messages, strict=False)) if a != b),
                      min(len(last), len(messages)))
        self._sent[role] = list(messages)
        return [{**message, "content": capped(message.get("content"))} if isinstance(message.get("content"), str)
                else message for message in messages[common:]]


def _stop_for(error: openai.APIStatusError) -> Stop:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    if detail.get("type") == BUDGET_ERROR:
        return Stop(str(detail.get("code") or "token_budget"))
    if detail.get("type") == UNAVAILABLE_ERROR:
        return Stop("model_unavailable", str(detail.get("message")))
    return Stop("request_rejected", f"HTTP {error.status_code}: {str(detail.get('message'))[:300]}")
