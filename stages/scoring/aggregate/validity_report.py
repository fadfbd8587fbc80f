"""The validity report: every kept task gated on what the reference agents score on it.

`validity_report` reads each agent's task scores (`processed/metrics/<agent>.tasks.json`) and
exact-match rate, the build's verification record and the kept tasks' golds, and puts together per
task the scores, honesty rates, gold spread (`golds`), test/train overlap and the failed gates
(`gates`); then the overall scores, the cuts by category and domain, the built catalog's counts and
where each domain's data came from (synthetic or real). `summary_metrics` is the part `dvc metrics
show/diff` compare; `table` the text people read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from stages.built_benchmark import built_specs
from stages.catalog_summary import catalog_summary, scores_by
from stages.layout import REPOSITORIES
from stages.params import ValidityParams
from stages.provenance import ProvenanceError, provenance_summary
from stages.repository import read_manifest
from stages.scoring.aggregate.gates import (
    chance_level,
    empty_task_failures,
    gate_failures,
    hypothesis_failures,
    overall_failures,
)
from stages.scoring.aggregate.golds import gold_spread


def agent_task_entries(metrics_dir: Path, agent: str) -> dict[str, dict]:
    """Task id -> the agent's task entry (score, honesty, ...) from `<agent>.tasks.json`."""
    path = metrics_dir / f"{agent}.tasks.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: run score@{agent} first (the validity suite needs it)")
    return json.loads(path.read_text())["tasks"]


def provenance(domains: list[str]) -> dict:
    """Per domain: which sources are synthetic or real, and whether they are mixed."""
    out = {}
    for domain in domains:
        try:
            out[domain] = provenance_summary(read_manifest(REPOSITORIES / domain))
        except (ProvenanceError, FileNotFoundError) as error:
            out[domain] = {"error": str(error)}
    return out


def exact_match_rates(metrics_dir: Path, agents: list[str]) -> dict[str, float | None]:
    """Each agent's exact-match rate (%) over the split's hypothesis queries (None: there are none)."""
    rates = {}
    for agent in agents:
        entry = json.loads((metrics_dir / f"{agent}.json").read_text()).get("exact_match") or {}
        rate = entry.get("rate")
        rates[agent] = None if rate is None else round(100 * rate, 6)
    return rates


def validity_report(benchmark: Path, metrics_dir: Path, settings: ValidityParams,
                    domains: list[str]) -> dict:
    """The whole report: per task scores, gold spread, honesty, overlap; overall; failures."""
    guessers = [g for g in (settings.hypothesis.nodata, settings.hypothesis.prior) if g]
    agents = list(dict.fromkeys([settings.oracle, *settings.candidates, *settings.floors, *guessers,
                                 *settings.references]))
    by_agent = {agent: agent_task_entries(metrics_dir, agent) for agent in agents}
    verification = json.loads((benchmark / "verification.json").read_text())
    tasks, failures = {}, empty_task_failures(verification)
    for task_id in sorted(verification["tasks_kept"]):
        scores = {a: by_agent[a].get(task_id, {}).get("score") for a in agents}
        spread = gold_spread(benchmark, task_id)
        failures += gate_failures(task_id, scores, spread, settings)
        tasks[task_id] = {
            "scores": scores,
            "honesty_rate": {a: by_agent[a].get(task_id, {}).get("honesty", {}).get("rate")
                             for a in agents},
            "gold_spread": spread,
            "split_overlap": verification["tasks"][task_id].get("split_overlap"),
        }
    overall = {a: round(sum(t["scores"][a] or 0.0 for t in tasks.values()) / max(len(tasks), 1), 6)
               for a in agents}
    failures += overall_failures(overall, settings)
    specs = built_specs(benchmark)
    rates = exact_match_rates(metrics_dir, agents)
    failures += hypothesis_failures(rates, settings)
    queries = pd.read_parquet(benchmark / "queries.parquet", columns=["task_id", "n_entities", "split"])
    for task_id, entry in tasks.items():
        if specs[task_id].answer.hypothesis is not None:
            sizes = queries.loc[queries["task_id"] == task_id, "n_entities"].tolist()
            entry["hypothesis"] = {"format": specs[task_id].answer.hypothesis.format,
                                   "chance_level": chance_level(specs[task_id], sizes)}
    per_agent = {a: {task_id: entry["scores"][a] for task_id, entry in tasks.items()} for a in agents}
    return {"agents": agents, "tasks": tasks, "overall": overall,
            "hypotheses": {"exact_match_percent": rates, "gates": settings.hypothesis.model_dump()},
            "by_category": {a: scores_by(specs, per_agent[a], "category") for a in agents},
            "by_domain": {a: scores_by(specs, per_agent[a], "domain") for a in agents},
            "catalog": catalog_summary(benchmark),
            "gates": settings.gates.model_dump(), "provenance": provenance(domains),
            "failures": failures, "passed": not failures}


def summary_metrics(report: dict) -> dict:
    """The few numbers `dvc metrics show/diff` compare: gates passed, overall score per agent."""
    return {"passed": report["passed"], "failures": len(report["failures"]),
            "overall": report["overall"],
            "honesty_rate": {agent: _mean_rate(report, agent) for agent in report["agents"]}}


def _mean_rate(report: dict, agent: str) -> float | None:
    rates = [t["honesty_rate"][agent] for t in report["tasks"].values()
             if t["honesty_rate"][agent] is not None]
    return round(sum(rates) / len(rates), 6) if rates else None


def table(report: dict) -> str:
    """The validity table as text: one row per task, one column per agent, then overall."""
    agents = report["agents"]
    short = {a: a[:10] for a in agents}
    width = max([34, *(len(task_id) + 2 for task_id in report["tasks"])])
    lines = [f"{'task':{width}}" + "".join(f"{short[a]:>11}" for a in agents) + "  best-const"]
    for task_id, entry in report["tasks"].items():
        scores = entry["scores"]
        share = entry["gold_spread"].get("best_constant_share")
        lines.append(f"{task_id:{width}}" + "".join(f"{(scores[a] or 0.0):>11.1f}" for a in agents)
                     + (f"  {share:>9.0%}" if share is not None else f"  {'-':>9}"))
    lines.append(f"{'overall':{width}}" + "".join(f"{report['overall'][a]:>11.1f}" for a in agents))
    for cut in ("by_domain", "by_category"):
        groups = sorted({g for a in agents for g in report.get(cut, {}).get(a, {})})
        for group in groups:
            lines.append(f"{'  ' + group:{width}}" + "".join(
                f"{report[cut][a].get(group, 0.0):>11.1f}" for a in agents))
    for domain, entry in report["provenance"].items():
        origins = ", ".join(f"{s} ({o})" for s, o in entry.get("origins", {}).items())
        lines.append(f"data of {domain}: {origins or entry.get('error')}"
                     + ("  WARNING: real and synthetic sources are mixed" if entry.get("mixed") else ""))
    lines.append("gates: " + ("all passed" if report["passed"] else "FAILED"))
    lines += [f"  {failure}" for failure in report["failures"]]
    return "\n".join(lines)
