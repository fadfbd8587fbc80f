"""The report's tables in page order: the agents' (`tables`), the catalog's and the generated benchmark's.

The HTML page, the terminal and the Prefect artifacts all take this one list. It sits above the
three table modules, which share `Table` from `tables` and know nothing of each other.
"""

from __future__ import annotations

from collections.abc import Mapping

from stages.report.catalog_tables import catalog_tables
from stages.report.epoch_tables import epoch_tables
from stages.report.generated_tables import generated_tables
from stages.report.inputs import ReportInputs
from stages.report.tables import (
    Table,
    attribution_table,
    cut_axes,
    cut_table,
    error_table,
    generalizability_table,
    honesty_table,
    outcome_table,
    score_table,
    task_table,
    usage_table,
    validity_table,
    versus_table,
)


def report_tables(inputs: ReportInputs, transcripts: Mapping[str, str] | None = None) -> list[Table]:
    """Every table of the report, in page order (the Prefect artifacts publish the same list).

    `transcripts`: agent -> the href of its transcript pages, which the score table links to.
    """
    axes, _ = cut_axes(inputs.metrics)
    tables = [score_table(inputs.metrics, transcripts), *epoch_tables(inputs), versus_table(inputs.comparison),
              outcome_table(inputs.metrics),
              error_table(inputs.metrics), attribution_table(inputs.metrics),
              *(cut_table(inputs.metrics, axis) for axis in axes), task_table(inputs),
              validity_table(inputs.validity), *catalog_tables(inputs.validity),
              honesty_table(inputs.metrics),
              usage_table(inputs.metrics, inputs.comparison)]
    if inputs.comparison.generalizability:
        tables.append(generalizability_table(inputs.comparison))
    return tables + generated_tables(inputs.generated)
