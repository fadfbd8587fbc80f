"""Agents by kind. Each kind turns its params options into an `AgentProgram` run in the sandbox.

Configured agents live in params.yaml under `agents:` (name -> kind + options); the registry here is
keyed by kind.
"""

from __future__ import annotations

from stages.agents import builtin, command
from stages.agents.program import AgentProgram, QueryContext

AGENTS = {
    "oracle": builtin.oracle,
    "nodata": builtin.nodata,
    "defensive": builtin.defensive,
    "fabricate": builtin.fabricate,
    "reference": builtin.reference,
    "command": command.program,
}

__all__ = ["AGENTS", "AgentProgram", "QueryContext"]
