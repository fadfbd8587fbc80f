"""Check a built benchmark's golds against cold runs: warm interpreters must not change a byte.

    python -m stages.construction.coldcheck [--per-task N] [--out FILE]

For the first N kept queries of every task (by query id), the annotator is run again the cold way
(a fresh sandbox and interpreter per run, `construct.warm: false`) and its label is compared, as
the JSON the build wrote into `private/queries.json`, with the build's: gold, reported answer,
tolerance, bootstrap spread and checkpoints. Prints one line per differing query and a summary;
exits 1 if any differs. `--out` writes the summary as JSON (processed/metrics/coldcheck.json).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from stages.catalog_scopes import read_prompt_block
from stages.construction import annotate
from stages.construction.benchmark import read_spec, sample_queries
from stages.hashing import write_json
from stages.layout import BENCHMARK, task_dir
from stages.params import load_params

FIELDS = ("gold", "reported", "tolerance", "bootstrap_sd", "checkpoints")


def record_of(label: annotate.Label) -> str:
    """A label as the build records it, serialised the way `write_private_queries` does."""
    return json.dumps({name: getattr(label, name) for name in FIELDS}, sort_keys=True, indent=2)


def check(benchmark: Path, per_task: int, concurrency: int) -> dict:
    """Relabel the sample cold; the summary, with every query whose record differs."""
    params = load_params()
    limits, hidden = params.construct.limits.to_limits(), [Path.cwd().resolve()]
    queries = sample_queries(benchmark, per_task)

    def cold(query) -> tuple[str, str | None, str]:
        folder = task_dir(benchmark, query.task_id)
        built = json.loads((folder / "private" / "queries.json").read_text())[query.query_id]
        expected = json.dumps({name: built[name] for name in FIELDS}, sort_keys=True, indent=2)
        label, discard = annotate.label_query(read_spec(benchmark, query.task_id), query, folder, limits, hidden,
                                              read_prompt_block(query.prompt, "Scope")["entity_key"], None)
        found = record_of(label) if label is not None else f"discarded: {discard.reason}"
        return query.query_id, None if found == expected else found, query.task_id

    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(cold, queries))
    differ = {query_id: {"task_id": task_id, "cold": found} for query_id, found, task_id in results
              if found is not None}
    return {"queries": len(queries), "tasks": len({task for _, _, task in results}),
            "identical": len(queries) - len(differ), "differ": differ}


def main() -> None:
    """See the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    summary = check(BENCHMARK, args.per_task, load_params().construct.concurrency)
    for query_id, found in summary["differ"].items():
        print(f"DIFFERS {found['task_id']} {query_id}: cold run gives {found['cold'][:200]}")
    print(f"coldcheck: {summary['identical']} of {summary['queries']} queries ({summary['tasks']} tasks) "
          "label identically cold")
    if args.out:
        write_json(args.out, summary)
    sys.exit(1 if summary["differ"] else 0)


if __name__ == "__main__":
    main()
