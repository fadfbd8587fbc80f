"""The catalog section of the report: what the benchmark holds, how the validity agents fare.

From the `catalog`, `by_category` and `by_domain` parts of validity.json.
"""

from __future__ import annotations

from stages.report.formatting import MISSING, fmt_number
from stages.report.inputs import ValidityReport
from stages.report.tables import Table


def category_domain_table(catalog: dict) -> Table:
    """Tasks per ST-Bench category and domain, with totals."""
    grid = catalog["tasks_by_category_domain"]
    domains = sorted(catalog["tasks_by_domain"])
    rows = [(category, *(str(cells.get(d, 0)) for d in domains), str(sum(cells.values())))
            for category, cells in grid.items()]
    rows.append(("all", *(str(catalog["tasks_by_domain"][d]) for d in domains), str(catalog["tasks"])))
    short = ", ".join(catalog["categories_below_four_tasks"]) or "none"
    return Table("catalog", "Catalog: tasks by category and domain",
                 f"{catalog['tasks']} tasks and {catalog['queries']} queries in this build. Categories "
                 f"with fewer than 4 tasks: {short}.", ("category", *domains, "tasks"), tuple(rows))


def catalog_counts_table(catalog: dict) -> Table:
    """Queries by split (per domain) and scope kind; tasks by difficulty and by each tag axis."""
    rows = [("queries by split", split, str(n)) for split, n in catalog["queries_by_split"].items()]
    rows += [(f"queries of {domain}", split, str(n))
             for domain, splits in catalog["queries_by_domain_split"].items() for split, n in splits.items()]
    rows += [("queries by scope kind", kind, str(n)) for kind, n in catalog["queries_by_scope_kind"].items()]
    rows += [("tasks by difficulty", level, str(n)) for level, n in catalog["tasks_by_difficulty"].items()]
    rows += [(f"tasks by {axis.replace('_', ' ')}", tag, str(n))
             for axis, tags in catalog["tasks_by_tag"].items() for tag, n in tags.items()]
    return Table("catalog-counts", "Catalog: splits, difficulty and tags",
                 "ST-Bench's reference mix: 17 easy / 49 medium / 34 hard tasks; 57 / 19 / 24 % of "
                 "queries in train / val / test.", ("count", "value", "n"), tuple(rows))


def by_group_table(validity: ValidityReport, cut: str, title: str) -> Table:
    """Each validity agent's mean task score per category or per domain."""
    scores = getattr(validity, cut)
    groups = sorted({g for per_agent in scores.values() for g in per_agent})
    rows = [(group, *(fmt_number(scores.get(a, {}).get(group)) if group in scores.get(a, {}) else MISSING
                      for a in validity.agents)) for group in groups]
    shades = [(None, *(scores.get(a, {}).get(group) for a in validity.agents)) for group in groups]
    return Table(f"validity-{cut.replace('_', '-')}", title,
                 "Mean task score (0-100) of each validity agent on the evaluated split.",
                 ("group", *validity.agents), tuple(rows), tuple(shades))


def catalog_tables(validity: ValidityReport) -> list[Table]:
    """The catalog tables, when the validity report carries the catalog summary."""
    if not validity.catalog:
        return []
    return [category_domain_table(validity.catalog), catalog_counts_table(validity.catalog),
            by_group_table(validity, "by_domain", "Validity agents by domain"),
            by_group_table(validity, "by_category", "Validity agents by category")]
