"""A model asked for one structured reply at a time, through the `openai` client: the harness's own calls.

Used where the harness itself needs a model's judgement, not an agent's (AutoSciBench's generator,
a workflow optimiser's designer). Each call is logged (step, attempt, messages, reply, usage as the
server reported it, problem, fallback). A reply the caller's `parse` refuses (a `ValueError`) is
sent back once with the problem stated; a second refusal, or a model API that fails after the
client's retries, gives None and counts a fallback, so the caller falls back to what it does
without the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

from stages.evaluation.agents.llm.usage import read_usage
from stages.params import Generation


class Asker:
    """One model, its calls and their log."""

    def __init__(self, model: str, base_url: str, api_key: str | None, generation: Generation,
                 retry: str, fallback: str, timeout_s: float = 120.0, max_retries: int = 2):
        """`retry` (with `{problem}`) answers a refused reply; `fallback` names what the caller does instead."""
        self.model, self.generation, self.retry, self.fallback = model, generation, retry, fallback
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout_s,
                                    max_retries=max_retries)
        self.log: list[dict] = []
        self.fallbacks = 0

    @property
    def usage(self) -> dict:
        """Tokens as the server reported them (a count it left out is not summed), calls answered, fallbacks."""
        calls = [entry for entry in self.log if entry["usage"] is not None]
        summed = {name: sum(c["usage"][name] or 0 for c in calls) for name in ("prompt_tokens", "completion_tokens")}
        flags = sorted({flag for c in calls for flag in c["usage"]["flags"]})
        return {"model": self.model, "calls": len(calls), **summed, "fallbacks": self.fallbacks, "flags": flags}

    def write_log(self, path: Path) -> None:
        """Every call as one JSON line."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(entry) + "\n" for entry in self.log))

    def ask(self, step: str, system: str, prompt: str, parse: Callable[[str], Any]) -> Any:
        """The parsed reply; None (a fallback, counted and logged) after a second unusable reply or an API failure."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        for attempt in range(2):
            entry = {"step": step, "attempt": attempt + 1, "messages": messages, "reply": None, "usage": None,
                     "problem": None, "fallback": None}
            self.log.append(entry)
            try:
                entry["reply"] = self._complete(messages, entry)
                return parse(entry["reply"])
            except openai.APIError as error:
                entry["problem"] = f"model API: {type(error).__name__}: {error}"
                break
            except ValueError as error:
                entry["problem"] = str(error)
                messages = [*messages, {"role": "assistant", "content": entry["reply"]},
                            {"role": "user", "content": self.retry.format(problem=error)}]
        entry["fallback"] = f"{self.fallback}: {entry['problem']}"
        self.fallbacks += 1
        return None

    def _complete(self, messages: list[dict], entry: dict) -> str:
        fields = self.generation.request_fields()
        named = {key: value for key, value in fields.items() if key not in self.generation.extra}
        response = self.client.chat.completions.create(model=self.model, messages=messages, **named,
                                                       extra_body=self.generation.extra or None)
        tokens, flags = read_usage(response.model_dump(), self.generation.max_tokens)
        entry["usage"] = {"prompt_tokens": tokens.prompt_tokens, "completion_tokens": tokens.completion_tokens,
                          "flags": flags}
        return response.choices[0].message.content or ""
