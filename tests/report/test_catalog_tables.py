"""The report's catalog section, from the catalog summary and per-group scores of validity.json."""

from __future__ import annotations

from stages.report.catalog_tables import catalog_tables
from stages.report.inputs import ValidityReport

CATALOG = {
    "tasks": 3, "queries": 7, "tasks_by_domain": {"camels": 2, "control": 1},
    "tasks_by_category_domain": {"clustering": {"camels": 1, "control": 1}, "forecasting": {"camels": 1}},
    "tasks_by_difficulty": {"easy": 1, "medium": 2},
    "tasks_by_tag": {"capability": {"modeling": 3}},
    "queries_by_split": {"test": 3, "train": 4}, "queries_by_domain_split": {"camels": {"test": 2}},
    "queries_by_scope_kind": {"geographic": 7}, "categories_below_four_tasks": ["clustering", "forecasting"],
}


def validity(catalog: dict) -> ValidityReport:
    return ValidityReport.model_validate({
        "agents": ["oracle", "heuristic"], "tasks": {}, "overall": {"oracle": 100.0, "heuristic": 50.0},
        "by_category": {"oracle": {"clustering": 100.0}, "heuristic": {"clustering": 25.0}},
        "by_domain": {"oracle": {"camels": 100.0}, "heuristic": {"camels": 50.0}},
        "catalog": catalog, "failures": [], "passed": True,
        "gates": {"oracle_min": 99, "floor_max": 2, "reference_max": 40, "constant_max_share": 0.34,
                  "candidate_margin": 30}})


def test_the_catalog_tables_count_tasks_by_category_and_domain_and_score_groups():
    grid, counts, by_domain, by_category = catalog_tables(validity(CATALOG))
    assert grid.columns == ("category", "camels", "control", "tasks")
    assert grid.rows == (("clustering", "1", "1", "2"), ("forecasting", "1", "0", "1"), ("all", "2", "1", "3"))
    assert "Categories with fewer than 4 tasks: clustering, forecasting." in grid.caption
    assert ("queries by split", "train", "4") in counts.rows
    assert ("tasks by difficulty", "medium", "2") in counts.rows
    assert ("tasks by capability", "modeling", "3") in counts.rows
    assert by_category.rows == (("clustering", "100.0", "25.0"),)
    assert by_domain.shades == ((None, 100.0, 50.0),)


def test_a_validity_report_without_a_catalog_adds_no_table():
    assert catalog_tables(validity({})) == []
