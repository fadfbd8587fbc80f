"""`python -m benchmarks.evaluation`: measure and write the figures (`--only` keeps the others)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import evaluation
from stages.layout import BENCHMARK, METRICS
from stages.yamlfile import read_yaml


def main() -> None:
    """`python -m benchmarks.evaluation`: measure and write the figures (`--only` keeps the others)."""
    from stages.hashing import write_json

    parser = argparse.ArgumentParser(prog="python -m benchmarks.evaluation", description=evaluation.__doc__)
    parser.add_argument("--only", choices=evaluation.MEASUREMENTS, action="append")
    args = parser.parse_args()
    params = read_yaml(Path("params.yaml"))
    results = evaluation.measure(tuple(args.only or evaluation.MEASUREMENTS), params, BENCHMARK)
    out = METRICS / "bench_evaluation.json"
    kept = json.loads(out.read_text()) if args.only and out.exists() else {}
    write_json(out, {**kept, **results})
    for line in evaluation.describe(results):
        print(line)


if __name__ == "__main__":
    main()
