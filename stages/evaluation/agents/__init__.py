"""Agents by kind. Each kind turns its params options into an `AgentProgram` run in the sandbox.

Configured agents live in params.yaml under `agents:` (name -> kind + options); the registry here is
keyed by kind. A kind in `IDENTITIES` says which of its options define the agent (and so key its
journal records); every other kind is keyed by all of its options.
"""

from __future__ import annotations

from stages.evaluation.agents import builtin, command, llm
from stages.evaluation.program import AgentProgram, QueryContext

AGENTS = {
    "oracle": builtin.oracle,
    "nodata": builtin.nodata,
    "prior": builtin.prior,
    "defensive": builtin.defensive,
    "fabricate": builtin.fabricate,
    "reference": builtin.reference,
    "heuristic": builtin.heuristic,
    "command": command.program,
    "llm": llm.program,
}
IDENTITIES = {
    "llm": llm.identity,  # not its endpoint, key variable, timeouts, retries or prices
    "heuristic": builtin.heuristic_identity,  # its code too: a changed method is a new agent
    "command": command.identity,  # nor how its model (if any) is reached
}

# The kinds whose runs of one query can differ (a model samples; a program may). Every other kind's
# run is fixed by the query alone, so it runs once whatever `epochs` says.
REPEATED = {"llm", "command"}

# What a kind loads once per evaluation process, before its queries run in many threads at once
# (which would otherwise all wait on the same imports).
PREPARE = {"llm": llm.prepare}

__all__ = ["AGENTS", "IDENTITIES", "PREPARE", "REPEATED", "AgentProgram", "QueryContext"]
