"""`llm` agents: a model behind any OpenAI-compatible chat-completions endpoint, looping in the sandbox.

The agent loop (`scripts/llm/`, bound alone at /agent and run as `python -m agent`) runs inside the query's sandbox, one
sandbox per query: the model's code runs as its subprocesses in `/workspace`, and files in `work/`
persist across its tool calls. The sandbox has no network; the loop reaches the model through the
harness's proxy (proxy.py) on a Unix socket bound at `/llm`, which holds the API key, forces the
model and generation settings, enforces the bounds and records every call. params.yaml:

    agents:
      react_gpt:
        kind: llm
        options: {strategy: react, model: gpt-4o-mini, base_url: "https://api.openai.com/v1",
                  api_key_env: OPENAI_API_KEY, generation: {temperature: 0, max_tokens: 4096, seed: 0},
                  max_turns: 20}
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from stages.evaluation.agents.llm.options import ModelAccess, Options
from stages.evaluation.agents.llm.options import identity as option_identity
from stages.evaluation.program import AgentProgram, QueryContext, directory_hash
from stages.yamlfile import read_yaml

SCRIPTS = Path(__file__).parents[1] / "scripts" / "llm"
CONFIG_ENV = "SCIBENCH_LLM_CONFIG"
LOOP_OPTIONS = ("strategy", "model", "max_turns", "max_rounds", "tool_output_chars", "wall_budget_s",
                "code_timeout_s", "scaffold")  # what the loop in the sandbox is told


class MissingApiKey(RuntimeError):
    """The variable `api_key_env` names is not set in the harness's environment."""


def identity(options: dict) -> dict:
    """What keys an llm agent's journal records: its defining options and the loop's code."""
    return {"options": option_identity(options), "scripts": directory_hash(SCRIPTS)}


def proxy_service(access: ModelAccess, query: QueryContext):
    """The per-query proxy to `access`'s model, with the API key read here from the environment."""
    from stages.evaluation.agents.llm.proxy import Settings  # httpx only when a model is used
    from stages.evaluation.agents.llm.service import ProxyService
    from stages.evaluation.agents.llm.upstream import Endpoint

    api_key = os.environ.get(access.api_key_env) if access.api_key_env else None
    if access.api_key_env and not api_key:
        raise MissingApiKey(f"the environment variable {access.api_key_env} (api_key_env) is not set")
    prices = access.prices or query.prices
    endpoint = Endpoint(url=access.base_url.rstrip("/") + "/chat/completions", api_key=api_key,
                        timeout_s=access.per_call_timeout_s, max_retries=access.max_retries,
                        backoff_s=access.retry_backoff_s, backoff_max_s=access.retry_backoff_max_s)
    settings = Settings(endpoint=endpoint, model=access.model, generation=access.generation.request_fields(),
                        max_tokens=access.generation.max_tokens, max_calls=access.max_turns,
                        token_budget=access.token_budget, prices=prices)
    return ProxyService(settings, prices.version if prices else None)


def program(options: dict, query: QueryContext) -> AgentProgram:
    """The loop for one query, and its proxy."""
    parsed = Options.model_validate(options)
    config = parsed.model_dump(include=set(LOOP_OPTIONS)) | {
        "domain": task_domain(query.private_dir) if parsed.domain_knowledge else None}
    return AgentProgram(argv=[sys.executable, "-m", "agent"], agent_dir=SCRIPTS,
                        env={CONFIG_ENV: json.dumps(config), "PYTHONPATH": "/"},
                        service=proxy_service(parsed, query))


def task_domain(private_dir: Path) -> str | None:
    """The built task's domain (for the domain-knowledge prompt variant)."""
    path = private_dir / "task.yaml"
    return read_yaml(path).get("domain") if path.exists() else None
