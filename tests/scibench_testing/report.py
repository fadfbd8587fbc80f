"""Hand-made score, compare and validity outputs in the scoring suite's schema, for tests/report/.

Four agents on two tasks, listed in `evaluate.agents` out of score order: beta (80.0, the oracle of
the validity suite), alpha (62.4), base (40.0, the baseline and the reference agent), zero (0.0, the
floor). Task t2 fails two gates (the oracle scores 60, the reference 50).
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import yaml
from scibench_testing.project import ROOT

from stages.params import ValidityGates, ValidityParams
from stages.report.__main__ import main

AGENTS = ["zero", "alpha", "base", "beta"]
ROLES = ValidityParams(oracle="beta", floors=["zero"], references=["base"],
                       gates=ValidityGates(oracle_min=99, floor_max=2, reference_max=40, constant_max_share=0.34))
VERSION = {"benchmark_id": "b0", "git": "v1.0", "dvc_lock": "l0"}


def outcomes(**nonzero: int) -> dict[str, int]:
    names = ["answered", "no_output", "unparseable", "exec_error", "timeout", "unrealistic", "infra_error"]
    return {name: nonzero.get(name, 0) for name in names}


def interval(low: float, high: float) -> dict:
    return {"low": low, "high": high, "level": 0.95, "resamples": 1000}


def cut(score: float | None, low: float, high: float, n_tasks: int = 1) -> dict:
    return {"score": score, "score_ci": interval(low, high), "n_tasks": n_tasks}


def agent_metrics(agent: str, score: float | None, ci: tuple[float, float], counts: dict, realistic: float,
                  passing: float | None, t1: float, t2: float, tokens: int | None, cost: float | None,
                  wall: float) -> dict:
    usage = {"tokens": tokens, "prompt_tokens": None if tokens is None else tokens * 3 // 4,
             "completion_tokens": None if tokens is None else tokens // 4, "cached_tokens": None,
             "reasoning_tokens": None, "cost_usd": cost, "wall_seconds": wall, "agent_seconds": wall,
             "limits": {"max_turns": 1} if agent == "alpha" else {}, "calls": 0 if tokens is None else 12,
             "queries_with_usage_flags": 1 if agent == "alpha" else 0,
             "models_reported": [] if tokens is None else ["m-2024"]}
    return {
        "agent": agent, "split": "test", "version": VERSION, "score": score, "n_tasks": 2, "n_queries": 6,
        "outcomes": counts, "exec_rate": 1.0, "realistic_rate": realistic,
        "pass_rate_given_realistic": passing, "reward_mean": 0.5,
        "honesty": {"agrees": 2, "disagrees": 1, "unreported": 0, "no_artifact": 0, "rate": 0.666667},
        "score_ci": interval(*ci),
        "usage": usage,
        "cuts": {"domain": {"camels": cut(score, *ci, n_tasks=2)},
                 "difficulty": {"easy": cut(t1, max(t1 - 5, 0), min(t1 + 5, 100)),
                                "hard": cut(t2, max(t2 - 5, 0), min(t2 + 5, 100))},
                 "category": {"prediction": cut(t1, t1, t1), "hypothesis": cut(t2, t2, t2)},
                 "capability": {}, "pipeline_stage": {}, "cognitive_skill": {"modelling": cut(t1, t1, t1)},
                 "mas_challenge": {}},
        "infra": {"retried_queries": 1, "extra_attempts": 2, "infra_error_queries": 0},
        "errors": {"counts": {"alignment": 1, "modeling": 0, "reasoning": 1},
                   "shares": {"alignment": 0.5, "modeling": 0.0, "reasoning": 0.5}},
        "exact_match": {"n_queries": 3, "rate": 1 / 3, "exec_rate": 1.0},
    }


METRICS = {
    "beta": agent_metrics("beta", 80.0, (70.04, 89.96), outcomes(answered=6), 1.0, 0.8, 100.0, 60.0,
                          12000, 0.5, 120.0),
    "alpha": agent_metrics("alpha", 62.4, (55.1, 69.8), outcomes(answered=5, timeout=1), 0.833333, 0.75,
                           70.0, 54.8, 3000, None, 20.0),
    "base": agent_metrics("base", 40.0, (30.0, 50.0), outcomes(answered=6), 1.0, 0.4, 30.0, 50.0,
                          None, 0.0, 40.0),
    "zero": agent_metrics("zero", 0.0, (0.0, 0.0), outcomes(unrealistic=5, exec_error=1), 0.0, None,
                          0.0, 0.0, None, 0.0, 6.0),
}
COMPARE = {
    "baseline": "base", "split": "test",
    "agents": {a: {"score": m["score"], "score_ci": m["score_ci"], "outcomes": m["outcomes"],
                   "realistic_rate": m["realistic_rate"],
                   "pass_rate_given_realistic": m["pass_rate_given_realistic"],
                   "wall_seconds_per_query": m["usage"]["wall_seconds"] / 6,
                   "tokens_per_query": (m["usage"]["tokens"] or 0) / 6, "cost_usd_per_query": None,
                   "parallelism": 1.0} for a, m in METRICS.items()},
    "versus_baseline": {
        "alpha": {"win_rate": 1.0, "delta_perf": 22.4, "delta_ci": {"low": 10.0, "high": 35.0}, "rho_time": 0.5,
                  "rho_token": None, "eta_time": 224.0, "eta_token": None},
        "base": {"win_rate": 0.0, "delta_perf": 0.0, "delta_ci": {"low": 0.0, "high": 0.0}, "rho_time": 1.0,
                 "rho_token": None, "eta_time": 0.0, "eta_token": None},
        "beta": {"win_rate": 0.5, "delta_perf": 40.0, "delta_ci": {"low": 25.0, "high": 55.0}, "rho_time": 3.0,
                 "rho_token": None, "eta_time": 20.0, "eta_token": None},
        "zero": {"win_rate": 0.0, "delta_perf": -40.0, "delta_ci": {"low": -50.0, "high": -30.0},
                 "rho_time": 0.15, "rho_token": None, "eta_time": -400.0, "eta_token": None},
    },
    "frontier": ["alpha", "beta", "zero"],
    "generalizability": [],
}
FAILURES = ["t2: oracle scores 60.0, the gate needs >= 99",
            "t2: reference agent base scores 50.0, the gate allows <= 40"]
VALIDITY = {
    "agents": ["beta", "zero", "base"],
    "tasks": {"t1": {"scores": {"beta": 100.0, "zero": 0.0, "base": 30.0}, "honesty_rate": {},
                     "gold_spread": {"kind": "metrics"}, "split_overlap": None},
              "t2": {"scores": {"beta": 60.0, "zero": 0.0, "base": 50.0}, "honesty_rate": {},
                     "gold_spread": {"kind": "hypothesis", "best_constant_share": 0.25}, "split_overlap": None}},
    "overall": {"beta": 80.0, "zero": 0.0, "base": 40.0},
    "gates": ROLES.gates.model_dump(), "provenance": {}, "failures": FAILURES, "passed": False,
}


def task_entries(agent: str) -> dict:
    cuts = METRICS[agent]["cuts"]["difficulty"]
    return {"t1": {"score": cuts["easy"]["score"], "success_rate": 1.0, "pass_rate": 1.0, "reward_mean": 0.5,
                   "n_queries": 3, "outcomes": outcomes(answered=3)},
            "t2": {"score": cuts["hard"]["score"], "success_rate": 1.0, "pass_rate": 1.0, "reward_mean": 0.5,
                   "n_queries": 3, "outcomes": outcomes(answered=3)}}


def write_inputs(root: Path) -> tuple[Path, Path]:
    """Write every input under `root`; returns (metrics dir, reports dir)."""
    metrics, reports = root / "processed/metrics", root / "processed/reports"
    metrics.mkdir(parents=True)
    reports.mkdir(parents=True)
    for agent, entry in METRICS.items():
        (metrics / f"{agent}.json").write_text(json.dumps(entry))
        (metrics / f"{agent}.tasks.json").write_text(json.dumps(
            {"agent": agent, "split": "test", "version": VERSION, "packages": {}, "tasks": task_entries(agent)}))
    (metrics / "compare.json").write_text(json.dumps(COMPARE))
    (reports / "validity.json").write_text(json.dumps(VALIDITY))
    return metrics, reports


def write_project(root: Path) -> Path:
    """A project folder: the inputs and the checkout's params.yaml evaluating the four agents."""
    write_inputs(root)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["evaluate"]["agents"] = AGENTS
    params["agents"] = {agent: {"kind": "nodata"} for agent in AGENTS}
    params["agents"] |= {floor: {"kind": floor} for floor in params["generate"]["floors"]}  # generate's floors
    params["validity"] = ROLES.model_dump()
    params["scoring"] = {"baseline": "base"}
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return root


def run_main(project: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`python -m stages.report *args` in `project`, in this process; returns what it printed."""
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(printed):
        patch.chdir(project)
        patch.delenv("PREFECT_API_URL", raising=False)
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        patch.setattr(sys, "argv", ["stages.report", *args])
        main()
    return printed.getvalue()
