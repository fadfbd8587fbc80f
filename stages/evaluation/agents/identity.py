"""An agent's identity: the hash of what defines it, which keys its journal records.

Evaluation appends a record under this key and scoring reads the records of the agent's current
configuration by it, so both take it from here (not from the harness that runs queries).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stages.evaluation.agents import AGENTS, IDENTITIES, REPEATED
from stages.evaluation.agents.builtin import RUN_OPTIONS
from stages.evaluation.journal import record_key
from stages.evaluation.program import directory_hash
from stages.hashing import content_hash
from stages.params import AgentParams, EvaluateParams, PriceTable


@dataclass(frozen=True)
class AgentSetup:
    """A configured agent: its name, params and the hash that keys its journal records."""

    name: str
    params: AgentParams
    agent_hash: str
    model: str | None
    prices: PriceTable | None = None  # not part of the hash: a new price table re-runs nothing


def setup_agent(name: str, params: AgentParams, prices: PriceTable | None = None) -> AgentSetup:
    """Hash the agent's kind, options and (for external programs) the bytes of its agent_dir.

    A kind in `IDENTITIES` is hashed by what defines it only: an llm agent by its strategy, model,
    generation settings, prompt variants, bounds and loop code, not by how the model is reached.
    """
    if params.kind not in AGENTS:
        raise KeyError(f"agent {name}: unknown kind {params.kind!r}; known: {sorted(AGENTS)}")
    agent_dir = params.options.get("agent_dir")
    files = directory_hash(Path(agent_dir)) if agent_dir else None
    chosen = {k: v for k, v in params.options.items() if k not in RUN_OPTIONS}  # how it runs, not what
    options = IDENTITIES[params.kind](chosen) if params.kind in IDENTITIES else chosen
    agent_hash = content_hash([params.kind, options, files])
    model = params.options.get("model")
    model = model.get("model") if isinstance(model, dict) else model  # a command agent's model access
    return AgentSetup(name, params, agent_hash, model, prices)


def query_keys(queries, agent: AgentSetup, epoch: int = 0) -> dict[str, str]:
    """Each query's journal key for this agent in one epoch (`queries`: rows with query_id and task_hash)."""
    return {row.query_id: record_key(row.task_hash, row.query_id, agent.agent_hash, agent.model, epoch)
            for row in queries.itertuples()}


def agent_epochs(params: AgentParams, settings: EvaluateParams) -> int:
    """How many times each query runs for this agent: its own `epochs`, else `evaluate.epochs`.

    A kind whose run the query alone fixes (the oracle, the floors, the reference models, the
    heuristic) runs once: more epochs would repeat the same bytes.
    """
    if params.kind not in REPEATED:
        return 1
    return params.epochs or settings.epochs
