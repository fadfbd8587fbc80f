"""`llm` agents: a model behind any OpenAI-compatible chat-completions endpoint, looping in the harness.

The agent loop (the strategies in programs.py and tools.py) runs in the evaluation process, many
queries' loops on one event loop (eventloop.py) with one shared `openai` client (client.py); only
the code the model writes runs, as cells of the query's kernel (`stages.sandbox.kernel`: one
persistent interpreter in a sandbox of its own, state kept across cells as in a notebook). Every
call goes through the query's proxy (proxy.py), which holds the API key, forces the model and
generation settings, enforces the bounds, retries the model API and records every call.
params.yaml:

    agents:
      react_gpt:
        kind: llm
        options: {strategy: react, model: gpt-4o-mini, base_url: "https://api.openai.com/v1",
                  api_key_env: OPENAI_API_KEY, generation: {temperature: 0, max_tokens: 4096, seed: 0},
                  max_turns: 20}
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from stages.evaluation.agents.llm.options import ModelAccess, Options
from stages.evaluation.agents.llm.options import identity as option_identity
from stages.evaluation.program import AgentProgram, QueryContext
from stages.hashing import content_hash, file_sha256
from stages.yamlfile import read_yaml

LOOP = Path(__file__).parent  # the loop's code, part of an llm agent's identity
LOOP_FILES = ("chat.py", "client.py", "ensemble.py", "interpreter.py", "loop.py", "programs.py", "prompts.py",
              "session.py", "tools.py", "workflows/schema.py", "workflows/documents.py")
LOOP_OPTIONS = ("model", "max_turns", "max_rounds", "tool_output_chars", "wall_budget_s",
                "code_timeout_s", "scaffold")  # what the loop is told, besides its workflow


class MissingApiKey(RuntimeError):
    """The variable `api_key_env` names is not set in the harness's environment."""


def identity(options: dict) -> dict:
    """What keys an llm agent's journal records: its defining options (its workflow document too), the loop's code."""
    return {"options": option_identity(options),
            "loop": content_hash([[name, file_sha256(LOOP / name)] for name in LOOP_FILES])}


def proxy_service(access: ModelAccess, query: QueryContext, in_process: bool = False):
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
    generation = access.generation.request_fields()
    if "seed" in generation:  # each epoch its own seed, where the endpoint takes one
        generation["seed"] += query.epoch
    settings = Settings(endpoint=endpoint, model=access.model, generation=generation,
                        max_tokens=access.generation.max_tokens, max_calls=access.max_turns,
                        token_budget=access.token_budget, prices=prices)
    return ProxyService(settings, prices.version if prices else None, in_process)


def program(options: dict, query: QueryContext) -> AgentProgram:
    """The loop for one query, and its proxy."""
    parsed = Options.model_validate(options)
    config = parsed.model_dump(include=set(LOOP_OPTIONS)) | {
        "workflow": parsed.load_workflow(query.task_id),
        "domain": task_domain(query.private_dir) if parsed.domain_knowledge else None}
    return AgentProgram(argv=[], loop=functools.partial(_run_loop, config),
                        service=proxy_service(parsed, query, in_process=True))


def prepare() -> None:
    """Load the loop and its client (the openai SDK, ~0.8 CPU-seconds) and start the event loop, once."""
    from stages.evaluation.agents.llm import eventloop
    from stages.evaluation.agents.llm.client import shared_client
    from stages.evaluation.agents.llm.loop import run_loop  # noqa: F401 - loaded here, used per query

    async def make_client() -> None:
        shared_client()

    eventloop.run(make_client())


def _run_loop(config: dict, kernel, prompt: str, env: dict[str, str]):
    from stages.evaluation.agents.llm.loop import run_loop  # the openai SDK only when a loop runs
    from stages.evaluation.agents.llm.service import TOKEN_ENV
    from stages.evaluation.agents.llm.session import Config

    return run_loop(Config(**config), env[TOKEN_ENV], kernel, prompt)


def task_domain(private_dir: Path) -> str | None:
    """The built task's domain (for the domain-knowledge prompt variant)."""
    path = private_dir / "task.yaml"
    return read_yaml(path).get("domain") if path.exists() else None
