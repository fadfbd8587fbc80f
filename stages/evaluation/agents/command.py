"""`command` agents: any external program, in any language, given the workspace path.

params.yaml:

    agents:
      my_agent:
        kind: command
        options:
          cmd: "python {agent_dir}/my_agent.py {workspace}"
          agent_dir: agents/my_agent      # mounted read-only at /agent inside the sandbox
          model:                          # optional: a model, through the harness's proxy
            {model: gpt-4o-mini, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY}

With `model`, the program finds the proxy's Unix socket in `$SCIBENCH_LLM_SOCKET` and the model's
name in `$SCIBENCH_LLM_MODEL`; the proxy holds the key, forces the model and generation settings,
enforces `max_turns` and `token_budget` and records usage, as for `llm` agents. The sandbox has no
network otherwise.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from stages.evaluation.agents.llm.options import ModelAccess
from stages.evaluation.program import AgentProgram, QueryContext

EPOCH_ENV = "SCIBENCH_EPOCH"


class Options(BaseModel):
    """Options of a command agent."""

    model_config = ConfigDict(extra="forbid")
    cmd: str
    agent_dir: str | None = None
    env: dict[str, str] = {}
    model: ModelAccess | None = None


def identity(options: dict) -> dict:
    """Everything but how the model is reached (a moved endpoint re-runs nothing)."""
    parsed = Options.model_validate(options)
    return parsed.model_dump(mode="json", exclude={"model"}) | {
        "model": parsed.model.identity() if parsed.model else None}


def program(options: dict, query: QueryContext) -> AgentProgram:
    """Build the command line with `{workspace}` and `{agent_dir}` filled in for the sandbox."""
    parsed = Options.model_validate(options)
    argv = [part.format(workspace="/workspace", agent_dir="/agent") for part in shlex.split(parsed.cmd)]
    agent_dir = Path(parsed.agent_dir).resolve() if parsed.agent_dir else None
    if agent_dir is not None and not agent_dir.is_dir():
        raise FileNotFoundError(f"command agent: agent_dir {agent_dir} does not exist")
    env = {**parsed.env, EPOCH_ENV: str(query.epoch)}  # which run of the query (`evaluate.epochs`): seed by it
    if parsed.model is None:
        return AgentProgram(argv=argv, agent_dir=agent_dir, env=env)
    from stages.evaluation.agents.llm import proxy_service

    return AgentProgram(argv=argv, agent_dir=agent_dir, env={**env, "SCIBENCH_LLM_MODEL": parsed.model.model},
                        service=proxy_service(parsed.model, query))
