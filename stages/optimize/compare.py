"""DVC entry point `compare_systems`: every optimize run on test against the one-turn baseline -> compare_systems.json.

ST-Bench's system metrics (stages/scoring/aggregate/comparison.py: win rate, delta perf, rho_time,
rho_token, eta, the frontier) for each run's learned systems against the single-agent baseline on
the same model, gen for every method run under both protocols, and beside them what the searches
cost (apart from test-time cost: the candidates' model tokens and seconds, the designer's tokens)
and the reward-hacking audit of each run:

- `honesty_rate`: the share of its test artifacts whose reported metrics agree with the recomputed;
- `fabricate_margin`: its test score minus the fabricate floor's (when the floor was evaluated);
- `inflated_preferred`: the candidates its searches preferred whose hand-ins reported more reward
  than they earned (search.py `Search.audit`; none expected, since only recomputed rewards are climbed).

Without an LLM endpoint every run skipped, and the file says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from stages.hashing import write_json
from stages.layout import METRICS, OPTIMIZE
from stages.params import BASELINE_RUN, load_params
from stages.scoring.aggregate.comparison import compare, load_scored

OUTPUT = METRICS / "compare_systems.json"


def search_cost(summary: dict) -> dict:
    """What a run's searches spent, summed over its units."""
    units = summary.get("units", {}).values()
    designer = [unit["search"]["designer"] or {} for unit in units]
    return {"candidate_tokens": sum(unit["search"]["tokens"] for unit in units),
            "candidate_seconds": round(sum(unit["search"]["seconds"] for unit in units), 3),
            "designer_calls": sum(d.get("calls", 0) for d in designer),
            "designer_tokens": sum(d.get("prompt_tokens", 0) + d.get("completion_tokens", 0) for d in designer),
            "candidates": sum(unit["candidates"] for unit in units)}


def audit(run: str, metrics: dict, summary: dict, fabricate: float | None) -> dict:
    """The reward-hacking audit of one run's systems."""
    return {"honesty_rate": metrics.get("honesty", {}).get("rate"),
            "fabricate_margin": None if fabricate is None else round(metrics["score"] - fabricate, 6),
            "inflated_preferred": sorted({digest for unit in summary.get("units", {}).values()
                                          for digest in unit["audit"]["inflated_preferred"]})}


def compare_systems(runs: list[str], split: str, resamples: int, seed: int, level: float,
                    metrics: Path = METRICS, optimize: Path = OPTIMIZE) -> dict:
    """The content of compare_systems.json."""
    summaries = {run: json.loads((optimize / run / "summary.json").read_text()) for run in runs}
    skipped = sorted({summary["skipped"] for summary in summaries.values() if "skipped" in summary})
    if skipped:
        return {"split": split, "skipped": "; ".join(skipped)}
    scored = {run: load_scored(run, metrics) for run in runs}
    methods = {summary["method"] for summary in summaries.values()}
    pairs = [(f"{method}-task", f"{method}-category") for method in sorted(methods)
             if {f"{method}-task", f"{method}-category"} <= set(runs)]
    result = compare(scored, BASELINE_RUN, pairs, resamples, seed, level)
    fabricate_path = metrics / "fabricate.json"
    fabricate = json.loads(fabricate_path.read_text()).get("score") if fabricate_path.is_file() else None
    result["search_cost"] = {run: search_cost(summaries[run]) for run in runs}
    result["audit"] = {run: audit(run, scored[run].summary, summaries[run], fabricate) for run in runs}
    return {"split": split, **result}


def main() -> None:
    """The DVC entry point."""
    params = load_params()
    settings = params.scoring
    result = compare_systems(params.optimize.runs, params.evaluate.split, settings.resamples, settings.seed,
                             settings.level)
    write_json(OUTPUT, result)
    print(f"compare_systems: skipped: {result['skipped']}" if "skipped" in result else
          f"compare_systems: {len(params.optimize.runs) - 1} systems against {BASELINE_RUN}; "
          f"frontier {', '.join(result['frontier'])}")


if __name__ == "__main__":
    main()
