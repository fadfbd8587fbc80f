"""Candidate workflows run through the real harness on pool queries, each hand-in rewarded; cached.

An optimiser proposes workflows; `Evaluator.evaluate(workflow, query_ids)` runs one on train or val
queries exactly as an evaluation would (the sandbox, the kernel, the proxy with its bounds and
usage accounting) and returns each query's reward (reward.py) with what the runs cost. Every run
is journaled under the candidate's agent hash, which covers the workflow document: a killed search
that proposes the same candidate again finds its finished queries and runs only the rest, and a
candidate proposed twice costs one run per query. Test queries are refused (held out).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from stages.built_benchmark import benchmark_id
from stages.evaluation.agents.identity import setup_agent
from stages.evaluation.agents.llm.workflows import Workflow
from stages.evaluation.harness import evaluate_query
from stages.evaluation.journal import Journal, JournalRecord, record_key
from stages.hashing import content_hash
from stages.optimize.reward import Baseline, HeldOut, record_reward
from stages.params import AgentParams
from stages.sandbox import Limits


@dataclass(frozen=True)
class Evaluation:
    """One candidate on some queries: each query's reward and what its runs cost."""

    workflow: str  # the document's content hash
    rewards: dict[str, float]
    reported: dict[str, float]  # the reward each hand-in's own numbers would earn (the audit's; never climbed)
    feedback: dict[str, str]  # what became of each run, as its agent saw it (never the truth): for the designer
    tokens: int  # of every run scored, found in the journal or not: what the candidate costs, in any order
    seconds: float
    reused: int  # queries found in the journal, not run again

    @property
    def mean(self) -> float:
        """The mean reward over the queries (0 for none)."""
        return _mean(self.rewards)

    @property
    def reported_mean(self) -> float:
        """The mean of the rewards the hand-ins' own numbers would earn."""
        return _mean(self.reported)


class Evaluator:
    """Runs candidates for one model on one benchmark's pools; its journal and artifacts under `folder`."""

    def __init__(self, benchmark: Path, access: dict, folder: Path, limits: Limits, hidden: list[Path],
                 baseline: Baseline | None = None, concurrency: int = 4, infra_retries: int = 1):
        self.benchmark, self.access, self.folder, self.limits, self.hidden = benchmark, access, folder, limits, hidden
        self.baseline, self.concurrency, self.infra_retries = baseline, concurrency, infra_retries
        self.queries = pd.read_parquet(benchmark / "queries.parquet").set_index("query_id", drop=False)
        self.journal = Journal(folder / "journal.jsonl")
        self.bench_id = benchmark_id(benchmark)

    def evaluate(self, workflow: Workflow, query_ids: list[str]) -> Evaluation:
        """Run `workflow` on the queries not yet journaled for it, and reward every one."""
        digest, records, ran = self.run(workflow, query_ids)
        both = {query_id: (0.0, 0.0) if record.infra_error else
                record_reward(self.benchmark, query_id, record, self.artifacts, self.baseline)
                for query_id, record in records.items()}
        return Evaluation(digest, {query_id: pair[0] for query_id, pair in both.items()},
                          {query_id: pair[1] for query_id, pair in both.items()},
                          {query_id: run_feedback(record) for query_id, record in records.items()},
                          sum(record.tokens for record in records.values()),
                          round(sum(record.wall_seconds for record in records.values()), 3), len(records) - len(ran))

    def run(self, workflow: Workflow, query_ids: list[str]) -> tuple[str, dict[str, JournalRecord],
                                                                        list[JournalRecord]]:
        """Run `workflow` where it has not run yet: its hash, every query's record, and the records run now."""
        rows = [self._pool_row(query_id) for query_id in sorted(set(query_ids))]
        digest, agent = self._agent(workflow)
        done = self.journal.latest()
        keys = {row["query_id"]: record_key(row["task_hash"], row["query_id"], agent.agent_hash, agent.model)
                for row in rows}
        pending = [row for row in rows if keys[row["query_id"]] not in done or done[keys[row["query_id"]]].infra_error]
        ran = []
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="candidate") as pool:
            for record in pool.map(lambda row: self._run(row, agent), pending):
                self.journal.append(record)
                ran.append(record)
        latest = self.journal.latest()
        return digest, {query_id: latest[key] for query_id, key in keys.items()}, ran

    @property
    def artifacts(self) -> Path:
        """Where the runs' artifacts are kept (by their sha256)."""
        return self.folder / "artifacts"

    def _pool_row(self, query_id: str) -> dict:
        row = self.queries.loc[query_id].to_dict()
        if row["split"] == "test":
            raise HeldOut(f"query {query_id} is on the test split: no candidate runs on it (held out)")
        return row

    def _agent(self, workflow: Workflow):
        text, digest = document(workflow)
        path = self.folder / "workflows" / f"{digest}.yaml"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        options = {key: value for key, value in self.access.items() if key not in ("strategy", "workflow")}
        return digest, setup_agent(f"candidate-{digest}", AgentParams(kind="llm", options=options | {
            "workflow": str(path)}))

    def _run(self, row: dict, agent) -> JournalRecord:
        return evaluate_query(row, agent, self.benchmark, self.bench_id, self.limits, self.hidden,
                              self.infra_retries, artifacts=self.artifacts)


def run_feedback(record: JournalRecord) -> str:
    """What became of a run, from what its agent saw too: exit, bound, the hand-in's problems, its last error line."""
    if record.infra_error:
        return "the harness could not run it"
    parts = ["timed out" if record.timed_out else f"exit code {record.exit_code}"]
    if record.agent_limit:
        parts.append(f"stopped at {record.agent_limit}")
    parts += [problem for problem in (record.answer_problem, record.artifact_problem) if problem]
    lines = [line.strip() for line in record.stderr.splitlines() if line.strip()]
    if lines:
        parts.append(f"last error line: {lines[-1][:200]}")
    return "; ".join(parts)


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def document(workflow: Workflow) -> tuple[str, str]:
    """The workflow's YAML text and its content hash (the name it is kept and logged under)."""
    text = yaml.safe_dump(workflow.model_dump(mode="json"), sort_keys=False)
    return text, content_hash(text)
