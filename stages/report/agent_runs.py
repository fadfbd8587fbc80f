"""What one agent left on the evaluated split, loaded once for both transcript views (Inspect log, HTML pages).

Joined by query id: the split's prompts, the per-query scores the score stage wrote
(`processed/scores/<agent>.parquet`), the latest journal record of each query under the agent's
current configuration, and the transcript each record names (`<runs>/<agent>/artifacts/<sha256>`).
None of it carries the gold or a private path: the prompts and transcripts are what the agent saw
and did, the scores are numbers and outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.evaluation.agents.identity import query_keys, setup_agent
from stages.evaluation.journal import Journal, JournalRecord
from stages.evaluation.transcript import Transcript
from stages.layout import journal_path
from stages.params import AgentParams


@dataclass(frozen=True, eq=False)
class AgentRuns:
    """One agent's queries on one split, everything keyed by query id."""

    agent: str
    model: str | None  # the configured model (None: an agent without one)
    prompts: dict[str, str]
    scores: pd.DataFrame  # one row per query (stages.scoring.aggregate.suite.COLUMNS)
    records: dict[str, JournalRecord]  # the latest record of each query that has one
    transcripts: dict[str, Transcript]  # the queries whose record names a transcript


def load_agent_runs(agent: str, params: AgentParams, queries: pd.DataFrame, runs: Path, scores: Path) -> AgentRuns:
    """One configured agent's runs from its journal, its transcripts and its per-query scores.

    Args:
        agent: The agent's name (`evaluate.agents`).
        params: Its configuration (`agents.<agent>`): which records are its current ones.
        queries: The split's queries (query_id, prompt, ...).
        runs: `processed/runs` (journals and artifacts).
        scores: `processed/scores` (`<agent>.parquet`).
    """
    setup = setup_agent(agent, params)
    keys = query_keys(queries, setup)
    latest = Journal(journal_path(runs, agent)).latest()
    records = {query_id: latest[key] for query_id, key in keys.items() if key in latest}
    artifacts = runs / agent / "artifacts"
    transcripts = {query_id: Transcript.model_validate_json((artifacts / record.transcript_sha256).read_bytes())
                   for query_id, record in records.items() if record.transcript_sha256}
    prompts = dict(zip(queries["query_id"], queries["prompt"], strict=True))
    return AgentRuns(agent, setup.model, prompts, pd.read_parquet(scores / f"{agent}.parquet"), records, transcripts)
