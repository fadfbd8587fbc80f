"""What one agent left on the evaluated split, loaded once for both transcript views (Inspect log, HTML pages).

Joined by query id: the split's prompts, the per-query scores the score stage wrote
(`processed/scores/<agent>.parquet`), the latest journal record of each query under the agent's
current configuration, and the transcript each record names (`<runs>/<agent>/artifacts/<sha256>`).
None of it carries the gold or a private path: the prompts and transcripts are what the agent saw
and did, the scores are numbers and outcomes.

An agent run in several epochs (`evaluate.epochs`) has a run per query and epoch: records and
transcripts are keyed by `run_name(query_id, epoch)`, the query id itself for epoch 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.evaluation.agents.identity import agent_epochs, query_keys, setup_agent
from stages.evaluation.journal import Journal, JournalRecord
from stages.evaluation.transcript import Transcript
from stages.layout import journal_path
from stages.params import AgentParams, EvaluateParams


@dataclass(frozen=True, eq=False)
class AgentRuns:
    """One agent's queries on one split, everything keyed by query id."""

    agent: str
    model: str | None  # the configured model (None: an agent without one)
    prompts: dict[str, str]
    scores: pd.DataFrame  # one row per run (stages.scoring.aggregate.suite.COLUMNS and `epoch`)
    records: dict[str, JournalRecord]  # run name -> the latest record of each run that has one
    transcripts: dict[str, Transcript]  # run name -> transcript, the runs whose record names one


def load_agent_runs(agent: str, params: AgentParams, queries: pd.DataFrame, runs: Path, scores: Path,
                    settings: EvaluateParams | None = None) -> AgentRuns:
    """One configured agent's runs from its journal, its transcripts and its per-query scores.

    Args:
        agent: The agent's name (`evaluate.agents`).
        params: Its configuration (`agents.<agent>`): which records are its current ones.
        queries: The split's queries (query_id, prompt, ...).
        runs: `processed/runs` (journals and artifacts).
        scores: `processed/scores` (`<agent>.parquet`).
        settings: `evaluate` (its epochs); None: one epoch.
    """
    setup = setup_agent(agent, params)
    latest = Journal(journal_path(runs, agent)).latest()
    records = {}
    for epoch in range(agent_epochs(params, settings) if settings is not None else 1):
        records |= {run_name(query_id, epoch): latest[key]
                    for query_id, key in query_keys(queries, setup, epoch).items() if key in latest}
    artifacts = runs / agent / "artifacts"
    transcripts = {name: Transcript.model_validate_json((artifacts / record.transcript_sha256).read_bytes())
                   for name, record in records.items() if record.transcript_sha256}
    prompts = dict(zip(queries["query_id"], queries["prompt"], strict=True))
    frame = pd.read_parquet(scores / f"{agent}.parquet")
    if "epoch" not in frame.columns:  # scored before repeated runs existed
        frame = frame.assign(epoch=0)
    return AgentRuns(agent, setup.model, prompts, frame, records, transcripts)


def run_name(query_id: str, epoch: int) -> str:
    """A run's name in page names and lookups: the query id, and `-e<epoch>` after it from epoch 1 on."""
    return query_id if not epoch else f"{query_id}-e{epoch}"
