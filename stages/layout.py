"""Where each stage's outputs live (relative to the project root); dvc.yaml names the same paths."""

from __future__ import annotations

from pathlib import Path

CATALOG = Path("catalog")
SOURCES = Path("processed/sources")
REPOSITORIES = Path("processed/repositories")
BENCHMARK = Path("processed/benchmark")
RUNS = Path("processed/runs")
METRICS = Path("processed/metrics")
JUDGEMENTS = Path("processed/judgements")  # the optional MR judge's verdicts (judge@<agent>)
OPTIMIZE = Path("processed/optimize")  # optimize@<run>: each run's learned workflows, search logs and summary
SCORES = Path("processed/scores")  # per-query scores of each agent (score@<agent>)
REPORTS = Path("processed/reports")
GENERATED = Path("processed/generated")  # the generate stage: sda/, sda_real/, auto/
RELEASE = Path("processed/release")  # what a publisher uploads: public files + croissant.json + DATASHEET.md


def task_dir(benchmark: Path, task_id: str) -> Path:
    """A built task's folder: `public/` (staged for agents) and `private/` (gold, annotator)."""
    return benchmark / "tasks" / task_id


def verify_run_dir(private_dir: Path, query_id: str) -> Path:
    """A kept query's verify run (`stages.evaluation.verify_run`), under its task's `private/`."""
    return private_dir / query_id / "verify_run"


def journal_path(runs: Path, agent: str) -> Path:
    """The append-only journal of one agent."""
    return runs / agent / "journal.jsonl"
