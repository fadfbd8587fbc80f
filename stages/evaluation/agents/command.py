"""`command` agents: any external program, in any language, given the workspace path.

params.yaml:

    agents:
      my_agent:
        kind: command
        options:
          cmd: "python {agent_dir}/my_agent.py {workspace}"
          agent_dir: agents/my_agent      # mounted read-only at /agent inside the sandbox
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stages.evaluation.agents.program import AgentProgram, QueryContext


class Options(BaseModel):
    """Options of a command agent."""

    model_config = ConfigDict(extra="forbid")
    cmd: str
    agent_dir: str | None = None
    env: dict[str, str] = {}


def program(options: dict, query: QueryContext) -> AgentProgram:
    """Build the command line with `{workspace}` and `{agent_dir}` filled in for the sandbox."""
    parsed = Options.model_validate(options)
    argv = [part.format(workspace="/workspace", agent_dir="/agent") for part in shlex.split(parsed.cmd)]
    agent_dir = Path(parsed.agent_dir).resolve() if parsed.agent_dir else None
    if agent_dir is not None and not agent_dir.is_dir():
        raise FileNotFoundError(f"command agent: agent_dir {agent_dir} does not exist")
    return AgentProgram(argv=argv, agent_dir=agent_dir, env=dict(parsed.env))
