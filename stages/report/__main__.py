"""DVC entry point `report`: write processed/reports/index.html, or print the summary (`--summary`).

The report stage also publishes its tables as Prefect artifacts when a Prefect API is configured
(`PREFECT_API_URL`, as `make ui` sets it); without one it says so and skips them, rather than start
a temporary Prefect server.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace

from stages.layout import GENERATED, METRICS, REPORTS
from stages.params import load_params
from stages.report.build import build_report
from stages.report.contents import report_tables
from stages.report.inputs import MissingInputError, load_inputs, load_metrics, load_validity
from stages.report.prefect import publish_tables
from stages.report.summary import agent_gates, summary_text
from stages.report.systems import load_systems


def main() -> None:
    """Build the report (and publish its artifacts), or print the terminal summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--summary", action="store_true", help="print the summary table, write nothing")
    args = parser.parse_args()
    params = load_params()
    agents = params.evaluate.agents
    try:
        if args.summary:
            validity = load_validity(REPORTS)
            print(summary_text(load_metrics(agents, METRICS), validity, agent_gates(validity, params.validity)))
            return
        inputs = replace(load_inputs(agents, METRICS, REPORTS, GENERATED), systems=load_systems(METRICS))
    except MissingInputError as error:
        sys.exit(f"report: {error}")
    path = build_report(inputs, REPORTS)
    print(f"report: {path} ({len(agents)} agents)")
    if not os.environ.get("PREFECT_API_URL"):
        print("report: PREFECT_API_URL is not set, Prefect artifacts skipped (make ui starts a server)")
        return
    summary = summary_text(inputs.metrics, inputs.validity, agent_gates(inputs.validity, params.validity))
    try:
        keys = publish_tables(report_tables(inputs), summary, path)
    except Exception as error:  # noqa: BLE001  (the page is written; the artifacts are a side channel)
        print(f"report: Prefect artifacts not published: {error}", file=sys.stderr)
        return
    print(f"report: {len(keys)} Prefect artifacts published ({keys[-1]}, ...)")


if __name__ == "__main__":
    main()
