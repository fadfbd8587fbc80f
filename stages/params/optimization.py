"""ST-Bench's protocol: multi-agent systems generated on the pools (stages/optimize/), and the model they run on."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from stages.params.section import Section

BASELINE_RUN = "one_turn"  # the single-agent baseline on the same model: evaluated like a run, never searched
RUN = r"^([a-z0-9_]+-(task|category)|one_turn)$"


class MethodBudget(Section):
    """What a method may spend per task (or category): rounds of candidates, val queries each is scored on."""

    rounds: int = Field(1, ge=1)
    val_queries: int = Field(2, ge=1)


class OptimizeParams(Section):
    """params.yaml `optimize`: which methods run under which protocol, on which model, at which budget."""

    # the model every candidate, the designer and the one-turn baseline run on: an llm agent's model
    # access ({model, base_url, api_key_env, generation, ...}); None: every stage of the protocol says
    # so and skips (the default build is offline)
    model: dict[str, Any] | None = None
    runs: list[str] = []  # "<method>-task", "<method>-category", and "one_turn" (the baseline)
    budgets: dict[str, MethodBudget] = {}  # per method; a method not named runs at ST-Bench's (its Table 3)
    seed: int = 0
    concurrency: int = Field(4, ge=1)  # candidate runs in flight (an LLM agent mostly waits on the model)
    cache_dir: str = ".cache/optimize"  # every candidate run, journaled by content: a killed search resumes

    @field_validator("runs")
    @classmethod
    def _named_runs(cls, runs: list[str]) -> list[str]:
        import re

        wrong = [run for run in runs if not re.match(RUN, run)]
        if wrong:
            raise ValueError(f"runs {wrong} are not '<method>-task', '<method>-category' or '{BASELINE_RUN}'")
        if runs and BASELINE_RUN not in runs:
            raise ValueError(f"runs must include {BASELINE_RUN!r}: every system is compared with it")
        return runs

    def skipped(self) -> str | None:
        """Why the protocol does not run here, or None."""
        if self.model is None:
            return "no LLM endpoint configured (params.yaml optimize.model is null); the build stays offline"
        return None

    def method_and_protocol(self, run: str) -> tuple[str, str]:
        """A run's method and protocol (the baseline: its own method, per task)."""
        method, _, protocol = run.partition("-")
        return method, protocol or "task"
