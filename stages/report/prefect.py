"""The report's tables as Prefect artifacts, so a run can be watched in the Prefect UI (`make ui`).

Each table becomes a table artifact keyed `scibench-<table key>` (lowercase letters, digits and
dashes, as Prefect requires), and the terminal summary a markdown artifact `scibench-summary`.
Called inside a flow run, the artifacts belong to that run; outside one, to a flow run of their
own ("report artifacts"). Each publication adds a new version under the same keys. Prefect is
imported only when publishing, so the rest of `stages` stays importable and testable without it.
"""

from __future__ import annotations

import re
from pathlib import Path

from stages.layout import METRICS, REPORTS
from stages.params import ValidityParams
from stages.report.contents import report_tables
from stages.report.inputs import load_inputs
from stages.report.summary import agent_gates, summary_text
from stages.report.tables import Table

KEY = re.compile(r"[a-z0-9-]+")
PREFIX = "scibench"


def artifact_key(name: str) -> str:
    """`scibench-<name>`, checked against Prefect's key alphabet."""
    key = f"{PREFIX}-{name}"
    if not KEY.fullmatch(key):
        raise ValueError(f"{key!r} is not a Prefect artifact key (lowercase letters, digits, dashes)")
    return key


def artifact_rows(table: Table) -> list[dict[str, str]]:
    """A table as the list of records `create_table_artifact` takes (one dict per row)."""
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def create_artifacts(tables: list[Table], summary: str, report: Path | None = None) -> list[str]:
    """Create one table artifact per table and a markdown artifact with the summary, here and now.

    Args:
        tables: The report's tables (`stages.report.contents.report_tables`).
        summary: The terminal summary (`stages.report.summary.summary_text`).
        report: Where the HTML report is, named in the summary artifact.

    Returns:
        The artifact keys, in the order created.
    """
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    keys = []
    for table in tables:
        key = artifact_key(table.key)
        create_table_artifact(table=artifact_rows(table), key=key, description=f"**{table.title}**. {table.caption}")
        keys.append(key)
    markdown = f"```\n{summary}\n```\n" + (f"\nThe full report: `{report}`\n" if report else "")
    key = artifact_key("summary")
    create_markdown_artifact(markdown=markdown, key=key, description="scibench: scores, outcomes, validity gates")
    return [*keys, key]


def publish_tables(tables: list[Table], summary: str, report: Path | None = None) -> list[str]:
    """`create_artifacts` in the current flow run, or in a flow run of its own when there is none.

    Prefect deprecates artifacts created outside a flow run; a DVC stage is not one, so it gets a
    run named "report artifacts".
    """
    from prefect import flow
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is not None:
        return create_artifacts(tables, summary, report)
    return flow(name="report", flow_run_name="report artifacts")(create_artifacts)(tables, summary, report)


def publish_report(agents: list[str], roles: ValidityParams, metrics_dir: Path = METRICS,
                   reports_dir: Path = REPORTS) -> list[str]:
    """Read the report's inputs and publish its tables and summary (for flows that end a run).

    Raises:
        MissingInputError: An input file is missing (named with the stage that writes it).
    """
    inputs = load_inputs(agents, metrics_dir, reports_dir)
    summary = summary_text(inputs.metrics, inputs.validity, agent_gates(inputs.validity, roles))
    return publish_tables(report_tables(inputs), summary, reports_dir / "index.html")
