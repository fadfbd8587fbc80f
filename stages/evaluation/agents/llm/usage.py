"""Token usage as the model server reports it, checked for plausibility, priced, and summed.

Read from the response (`usage.prompt_tokens`, `completion_tokens`,
`prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`). Servers differ
(some omit usage, some report zeros), so every count that is missing or implausible is None and
flagged on its call, never silently 0:

- `missing_usage`: no usage object; `missing_<count>`: a count is absent or not an integer;
- `negative_<count>`: below zero; `zero_prompt_tokens`: a prompt of no tokens;
- `completion_over_max_tokens`: more tokens than the forced `max_tokens`;
- `cached_over_prompt`, `reasoning_over_completion`: a part larger than its whole;
- `total_mismatch`: `total_tokens` is not prompt + completion;
- `unknown_price`: the model is not in the price table (the call's cost is None);
- `no_usage_no_cost`: the call's cost is None because its tokens are unknown.

Cost (USD) = (prompt - cached) x input + cached x cached_input + completion x output, per million
tokens; reasoning tokens are part of completion tokens and bill as output.
"""

from __future__ import annotations

from typing import Any

from stages.evaluation.journal import ModelCall, Tokens, Usage, UsageTotals
from stages.params import ModelPrice, PriceTable

COUNTS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")


def _count(value: Any, name: str, flags: list[str]) -> int | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        flags.append(f"missing_{name}")
        return None
    if value < 0:
        flags.append(f"negative_{name}")
        return None
    return value


def _detail(usage: dict, section: str, name: str, flags: list[str]) -> int | None:
    details = usage.get(section)
    if not isinstance(details, dict) or name not in details:
        return None  # optional: many servers leave the details out
    return _count(details[name], name, flags)


def read_usage(response: dict, max_tokens: int) -> tuple[Tokens, list[str]]:
    """The token counts of one response and the flags for what is missing or implausible."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return Tokens(), ["missing_usage"]
    flags: list[str] = []
    prompt = _count(usage.get("prompt_tokens"), "prompt_tokens", flags)
    completion = _count(usage.get("completion_tokens"), "completion_tokens", flags)
    cached = _detail(usage, "prompt_tokens_details", "cached_tokens", flags)
    reasoning = _detail(usage, "completion_tokens_details", "reasoning_tokens", flags)
    if prompt == 0:
        flags.append("zero_prompt_tokens")
    if completion is not None and completion > max_tokens:
        flags.append("completion_over_max_tokens")
    if cached is not None and prompt is not None and cached > prompt:
        flags.append("cached_over_prompt")
    if reasoning is not None and completion is not None and reasoning > completion:
        flags.append("reasoning_over_completion")
    total = usage.get("total_tokens")
    if (isinstance(total, int) and prompt is not None and completion is not None
            and total != prompt + completion):
        flags.append("total_mismatch")
    return Tokens(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached,
                  reasoning_tokens=reasoning), flags


def model_price(prices: PriceTable | None, *names: str | None) -> ModelPrice | None:
    """The price of the first of `names` the table lists."""
    if prices is None:
        return None
    return next((prices.models[name] for name in names if name in prices.models), None)


def call_cost(tokens: Tokens, price: ModelPrice | None, flags: list[str]) -> float | None:
    """The call's cost in USD, or None (flagged) when its price or its tokens are unknown."""
    if price is None:
        flags.append("unknown_price")
        return None
    if tokens.prompt_tokens is None or tokens.completion_tokens is None:
        flags.append("no_usage_no_cost")
        return None
    cached = min(tokens.cached_tokens or 0, tokens.prompt_tokens)
    cached_rate = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    cost = ((tokens.prompt_tokens - cached) * price.input_per_mtok + cached * cached_rate
            + tokens.completion_tokens * price.output_per_mtok) / 1e6
    return round(cost, 10)


def total(calls: list[ModelCall]) -> UsageTotals:
    """Sums over `calls`; calls the proxy refused cost nothing and are not counted."""
    made = [call for call in calls if call.refused is None]
    return combine([UsageTotals(calls=1, seconds=call.latency_seconds,
                                cost_usd=call.cost_usd if call.status == 200 else 0.0,
                                **{name: getattr(call, name) for name in COUNTS}) for call in made]) or UsageTotals()


def summarize(calls: list[ModelCall], prices_version: str | None,
              discarded: UsageTotals | None = None) -> Usage:
    """The usage of one attempt: every call, totals per role and in all, every flag once."""
    roles = sorted({call.role for call in calls})
    flags = sorted({flag for call in calls for flag in call.flags})
    return Usage(calls=calls, roles={role: total([c for c in calls if c.role == role]) for role in roles},
                 total=total(calls), flags=flags, prices_version=prices_version, discarded=discarded)


def combine(parts: list[UsageTotals]) -> UsageTotals | None:
    """One total over several (earlier attempts' usage), or None when there is none."""
    if not parts:
        return None
    sums: dict[str, Any] = {}
    for name in COUNTS:
        values = [getattr(part, name) for part in parts if getattr(part, name) is not None]
        sums[name] = sum(values) if values else None
    costs = [part.cost_usd for part in parts]
    cost = None if any(c is None for c in costs) else round(sum(costs), 10)  # type: ignore[arg-type]
    return UsageTotals(calls=sum(part.calls for part in parts), cost_usd=cost,
                       seconds=round(sum(part.seconds for part in parts), 3), **sums)
