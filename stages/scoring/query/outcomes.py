"""Read the agent's `work/answer.json` and give each query exactly one `Outcome` (SPEC §5).

Rules, first match wins: an infrastructure error -> `infra_error`; a timeout -> `timeout`; no answer
file -> `exec_error` when the exit code is not 0, else `no_output`; text that is not JSON, has the
wrong shape or the wrong type for the declared format -> `unparseable`; a parsed answer that fails
the realistic filter -> `unrealistic`; else `answered`. A valid answer counts even when the program
exited non-zero; `Execution.exec_ok` records the exit status apart (MoSciBench's Exec rate).

The realistic filter follows ST-Bench §3.2 (Cheng et al., 2026, arXiv:2610.07763): metrics answers
need finite values, at least one strictly positive value and no `-1` sentinel. Hypothesis answers
(MoSciBench) need finite numbers, no `-1` sentinel anywhere and non-empty strings and lists.

Decisions where SPEC §5 is silent:
- Non-finite numbers (NaN, Infinity, overflowing literals) make an answer *unparseable*: JSON has no
  such values, so they are a format error rather than a defensive default.
- Booleans are never numbers, and numbers are never booleans (`{"answer": -1}` for a boolean task
  is unparseable). Numbers written as strings are unparseable.
- Only the task's defined metric names are read, by exact name. Extra names are dropped before the
  realistic filter, so a padding metric cannot make a defensive answer realistic. A defined metric
  whose value is not a finite number (including `null`) makes the answer unparseable; an omitted
  metric only fails its own check.
- The string `"-1"` (after strip) is a sentinel too, for categories and list items.
- A category outside `categories` is unparseable, for a category answer and for list items alike.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from stages.catalog import AnswerSpec, HypothesisSpec

SENTINEL = -1.0
SENTINEL_TEXT = "-1"


class Outcome(StrEnum):
    """What happened on one query; every query has exactly one."""

    ANSWERED = "answered"
    NO_OUTPUT = "no_output"
    UNPARSEABLE = "unparseable"
    EXEC_ERROR = "exec_error"
    TIMEOUT = "timeout"
    UNREALISTIC = "unrealistic"
    INFRA_ERROR = "infra_error"


@dataclass(frozen=True)
class Execution:
    """One run of an agent on a query, as the harness recorded it.

    Attributes:
        exit_code: The program's exit code; None when it never exited on its own.
        timed_out: Whether the harness stopped the program at the time limit.
        infra_error: A message when the harness itself failed (never the model's fault).
        answer_text: The text of `work/answer.json`, or None when the file was not written.
        answer_problem: Why an `answer.json` that exists was not taken (a symlink, a hard link,
            over the size cap, not UTF-8): scored as unparseable.
    """

    exit_code: int | None
    timed_out: bool
    infra_error: str | None
    answer_text: str | None
    answer_problem: str | None = None

    @property
    def exec_ok(self) -> bool:
        """Whether the program's code ran to a zero exit code."""
        return self.exit_code == 0


class _Invalid(ValueError):
    """A value of the wrong shape or type for the declared answer format.

    `parse_document` turns every `_Invalid` into None and never reads its argument, so a mutant
    that changes the argument cannot change behaviour: the raises carry `pragma: no mutate`.
    """


def answer_kind(spec: AnswerSpec) -> Literal["metrics", "hypothesis"]:
    """Whether a task is answered with named metrics (ST-Bench) or a hypothesis (MoSciBench)."""
    return "metrics" if spec.metrics is not None else "hypothesis"


def as_finite(value: Any) -> float | None:
    """Return `value` as a finite float; None for booleans, non-numbers and non-finite numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _number(spec: HypothesisSpec, value: Any) -> float:
    number = as_finite(value)
    if number is None:
        raise _Invalid(value)  # pragma: no mutate
    return number


def _boolean(spec: HypothesisSpec, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(value)  # pragma: no mutate
    return value


def _category(spec: HypothesisSpec, value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid(value)  # pragma: no mutate
    text = value.strip()
    allowed = spec.categories
    if allowed is not None and text.casefold() not in {c.strip().casefold() for c in allowed}:
        raise _Invalid(value)  # pragma: no mutate
    return text


def _list(spec: HypothesisSpec, value: Any) -> list[float | str]:
    if not isinstance(value, list):
        raise _Invalid(value)  # pragma: no mutate
    return [_category(spec, v) if isinstance(v, str) else _number(spec, v) for v in value]


def _coordinates(spec: HypothesisSpec, value: Any) -> list[float]:
    if not isinstance(value, list) or len(value) != 2:
        raise _Invalid(value)  # pragma: no mutate
    return [_number(spec, item) for item in value]


VALUE_PARSERS: dict[str, Callable[[HypothesisSpec, Any], Any]] = {
    "number": _number,
    "boolean": _boolean,
    "category": _category,
    "list": _list,
    "coordinates": _coordinates,
}


def _parse_metrics(spec: AnswerSpec, document: dict) -> dict:
    reported = document.get("metrics")
    if not isinstance(reported, dict):
        raise _Invalid(reported)  # pragma: no mutate
    names = [metric.name for metric in spec.metrics or []]
    values = {name: as_finite(reported[name]) for name in names if name in reported}
    if any(value is None for value in values.values()):
        raise _Invalid(reported)  # pragma: no mutate
    return {"metrics": values}


def _parse_hypothesis(spec: AnswerSpec, document: dict) -> dict:
    if "answer" not in document or spec.hypothesis is None:
        raise _Invalid(document)  # pragma: no mutate
    hypothesis = spec.hypothesis
    return {"answer": VALUE_PARSERS[hypothesis.format](hypothesis, document["answer"])}


DOCUMENT_PARSERS: dict[str, Callable[[AnswerSpec, dict], dict]] = {
    "metrics": _parse_metrics,
    "hypothesis": _parse_hypothesis,
}


def parse_document(spec: AnswerSpec, document: Any) -> dict | None:
    """Validate an already-decoded answer against the spec.

    Args:
        spec: The task's answer spec.
        document: The decoded JSON value.

    Returns:
        `{"metrics": {name: float}}` holding only the defined metrics that were reported, or
        `{"answer": value}` with the value normalised for its format; None when unparseable.
    """
    if not isinstance(document, dict):
        return None
    try:
        return DOCUMENT_PARSERS[answer_kind(spec)](spec, document)
    except _Invalid:
        return None


def parse_answer(spec: AnswerSpec, text: str) -> dict | None:
    """Parse the text of `work/answer.json`; None when it is not valid JSON of the right shape."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parse_document(spec, document)


def _numbers_realistic(numbers: list[float]) -> bool:
    return all(math.isfinite(n) and n != SENTINEL for n in numbers)


def _text_realistic(text: str) -> bool:
    return text.strip() not in ("", SENTINEL_TEXT)


def _item_realistic(item: float | str) -> bool:
    return _text_realistic(item) if isinstance(item, str) else _numbers_realistic([item])


VALUE_REALISTIC: dict[str, Callable[[Any], bool]] = {
    "number": lambda value: _numbers_realistic([value]),
    "boolean": lambda value: True,
    "category": _text_realistic,
    "list": lambda value: bool(value) and all(_item_realistic(item) for item in value),
    "coordinates": _numbers_realistic,
}


def _metrics_realistic(spec: AnswerSpec, parsed: dict) -> bool:
    values = list(parsed["metrics"].values())
    return any(value > 0 for value in values) and _numbers_realistic(values)


def _hypothesis_realistic(spec: AnswerSpec, parsed: dict) -> bool:
    return VALUE_REALISTIC[spec.hypothesis.format](parsed["answer"])


DOCUMENT_REALISTIC: dict[str, Callable[[AnswerSpec, dict], bool]] = {
    "metrics": _metrics_realistic,
    "hypothesis": _hypothesis_realistic,
}


def is_realistic(spec: AnswerSpec, parsed: dict) -> bool:
    """Apply the realistic filter to an answer returned by `parse_answer`.

    Metrics: every value finite, at least one strictly positive, none equal to -1. Hypothesis:
    finite numbers, no -1 (bare, in a list or in coordinates), non-empty strings and lists.
    """
    return DOCUMENT_REALISTIC[answer_kind(spec)](spec, parsed)


def classify(spec: AnswerSpec, execution: Execution) -> tuple[Outcome, dict | None]:
    """Give one query its outcome.

    Returns:
        The outcome and the parsed answer; the parsed answer is kept for `answered` and
        `unrealistic` (to inspect what was filtered out) and is None otherwise.
    """
    if execution.infra_error is not None:
        return Outcome.INFRA_ERROR, None
    if execution.timed_out:
        return Outcome.TIMEOUT, None
    if execution.answer_problem is not None:
        return Outcome.UNPARSEABLE, None
    if execution.answer_text is None:
        return (Outcome.NO_OUTPUT if execution.exec_ok else Outcome.EXEC_ERROR), None
    parsed = parse_answer(spec, execution.answer_text)
    if parsed is None:
        return Outcome.UNPARSEABLE, None
    if not is_realistic(spec, parsed):
        return Outcome.UNREALISTIC, parsed
    return Outcome.ANSWERED, parsed
