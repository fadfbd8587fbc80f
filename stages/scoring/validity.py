"""DVC entry point `validity`: gate every task on what reference agents can score on it.

The gates (`stages.scoring.aggregate.gates`): the oracle reaches `oracle_min`; the floors
(`fabricate`, `nodata`, `defensive`) stay at most `floor_max` and the reference-model agents at most
`reference_max`; a candidate (the `heuristic` agent) scores at least the best reference agent and at
most the oracle on every task and clears the best reference agent overall by `candidate_margin`; a
hypothesis task's golds are not near-constant; on hypothesis queries the no-data guessers stay
bounded. The report (processed/reports/validity.json; its summary, for `dvc metrics show/diff`, in
processed/metrics/validity.json) also gives the gold spread, the reference values, the honesty rate
of every agent, the test/train overlap of the splits and where the data came from (synthetic or
real). A failed gate fails the stage, naming the task and the gate.
"""

from __future__ import annotations

import argparse
import json
import sys

from stages.hashing import write_json
from stages.layout import BENCHMARK, METRICS, REPORTS
from stages.params import load_params
from stages.scoring.aggregate.validity_report import summary_metrics, table, validity_report


def main() -> None:
    """Write the report and its summary metrics, print the table; exit 1 when a gate fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--show", action="store_true", help="print the last report, run nothing")
    args = parser.parse_args()
    path = REPORTS / "validity.json"
    if args.show:
        print(table(json.loads(path.read_text())))
        return
    params = load_params()
    report = validity_report(BENCHMARK, METRICS, params.validity, params.construct.domains)
    write_json(path, report)
    write_json(METRICS / "validity.json", summary_metrics(report))
    print(table(report))
    if not report["passed"]:
        print(f"validity: {len(report['failures'])} gate(s) failed (see above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
