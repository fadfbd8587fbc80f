"""DVC entry point `compare`: every evaluated agent against the baseline -> processed/metrics/compare.json.

Reads what `score@<agent>` wrote for each agent of `evaluate.agents` (the summary in
`processed/metrics/<agent>.json`, the task scores in `<agent>.tasks.json`, the per-query scores in
`processed/scores/<agent>.parquet`); the baseline and the generalizability pairs come from
params.yaml `scoring`. Nothing here re-runs or re-scores an agent.
"""

from __future__ import annotations

from stages.hashing import write_json
from stages.layout import METRICS
from stages.params import load_params
from stages.scoring.aggregate.comparison import compare, load_scored


def main() -> None:
    """Compare every agent of `evaluate.agents` on the evaluated split."""
    params = load_params()
    settings = params.scoring
    agents = {name: load_scored(name) for name in params.evaluate.agents}
    splits = {agent.summary["split"] for agent in agents.values()}
    if splits != {params.evaluate.split}:
        raise ValueError(f"compare: agents were scored on {sorted(splits)}, params say "
                         f"{params.evaluate.split!r}; re-run the score stages")
    pairs = [(pair.task_trained, pair.category_trained) for pair in settings.generalizability]
    result = compare(agents, settings.baseline, pairs, settings.resamples, settings.seed, settings.level)
    write_json(METRICS / "compare.json", {"split": params.evaluate.split, **result})
    if settings.baseline:
        print(f"compare: {len(agents)} agents against {settings.baseline}; "
              f"frontier {', '.join(result['frontier'])}")


if __name__ == "__main__":
    main()
