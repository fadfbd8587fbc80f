
from stages.construction.drawing import answers_agree


def test_answers_agree_within_relative_tolerance_only():
    gold = {"metrics": {"nse": 0.712345, "kge": 0.5}}
    assert answers_agree(gold, {"metrics": {"nse": 0.712345 * (1 + 1e-8), "kge": 0.5}}, 1e-6)
    assert not answers_agree(gold, {"metrics": {"nse": 0.7124, "kge": 0.5}}, 1e-6)
    assert not answers_agree(gold, {"metrics": {"nse": 0.712345}}, 1e-6)
    assert answers_agree({"answer": ["a", 1.0]}, {"answer": ["a", 1.0]}, 1e-6)
    assert not answers_agree({"answer": True}, {"answer": 1}, 1e-6)


def _task(scopes: list[str]):
    from pathlib import Path

    from stages.catalog import CatalogTask, TaskSpec

    spec = TaskSpec.model_validate({
        "id": "t", "domain": "camels", "category": "clustering", "difficulty": "easy",
        "modalities": ["timeseries"], "source": {"citation": "c"}, "prompt": "Cluster.",
        "data": {"repository": "camels", "tables": {"entities": ["gauge_id"]}}, "scopes": scopes,
        "min_entities": 2,
        "answer": {"metrics": [{"name": "silhouette", "description": "s", "target": "> 0.2"}]},
    })
    return CatalogTask(spec, Path("."), Path("reproduce.py"), definition_hash="d1", task_hash="h1")


def test_draw_discards_unavailable_duplicate_and_overflow_scopes():
    from datetime import date

    import pandas as pd

    from stages.catalog_scopes import ScopeSpec
    from stages.construction.drawing import draw_queries

    entities = pd.DataFrame({"gauge_id": ["a", "b", "c"], "huc_02": ["01", "01", "03"]})
    scopes = {
        "huc01": ScopeSpec(name="huc01", kind="geographic", description="HUC 01",
                           entities={"huc_02": ["01"]}),
        "huc03": ScopeSpec(name="huc03", kind="geographic", description="HUC 03",
                           entities={"huc_02": ["03"]}),
        "all": ScopeSpec(name="all", kind="temporal", description="All"),
        "all_2000s": ScopeSpec(name="all_2000s", kind="temporal", description="All", years=(2000, 2009)),
        "first": ScopeSpec(name="first", kind="temporal", description="2000", years=(2000, 2000)),
    }
    queries, discards = draw_queries(_task(["huc01", "huc03", "all", "all_2000s", "first"]), scopes,
                                     entities, "gauge_id", (date(2000, 1, 1), date(2001, 12, 31)),
                                     limit=2)
    assert [q.scope for q in queries] == ["huc01", "all"]
    assert [(d.scope, d.reason) for d in discards] == [
        ("huc03", "scope selects 1 entities, the task needs 2"),
        ("all_2000s", "same entities and period as scope 'all'"),
        ("first", "query pool is full (2 queries per task)"),
    ]
    assert len({q.query_id for q in queries}) == 2
    assert all(q.query_id.startswith("q-") for q in queries)


def test_a_tables_notes_go_with_it_into_the_public_readme(tmp_path):
    import numpy as np
    import pandas as pd

    from stages.catalog import CatalogTask, TaskSpec
    from stages.construction.drawing import data_readme, extract_tables
    from stages.repository import write_tables
    from stages.tables import Table

    note = ("1 of 2 counties have no coordinates (lat_deg or lon_deg null) and are left out of the imagery"
            " join (no county_image_stats or county_image_static rows, null image summary columns): soybean 1")
    counties = pd.DataFrame({"crop": pd.array(["maize", "soybean"], dtype="string"),
                             "loc_id": pd.array(["0", "0"], dtype="string"),
                             "lat_deg": [39.98, np.nan], "relief_mean_m": [180.0, np.nan]})
    yields = pd.DataFrame({"crop": pd.array(["maize"], dtype="string"), "loc_id": pd.array(["0"], dtype="string"),
                           "yield_t_ha": [9.5]})
    write_tables(tmp_path, [Table("counties", counties, ("crop", "loc_id"), {"lat_deg": "deg", "relief_mean_m": "m"},
                                  (note,)),
                            Table("county_yield", yields, ("crop", "loc_id"), {"yield_t_ha": "t/ha"})], {})
    spec = TaskSpec.model_validate({
        "id": "t", "domain": "cropbench", "category": "clustering", "difficulty": "easy",
        "modalities": ["tabular"], "source": {"citation": "c"}, "prompt": "Cluster.",
        "data": {"repository": "cropbench", "tables": {"counties": ["loc_id", "lat_deg", "relief_mean_m"],
                                                        "county_yield": ["loc_id", "yield_t_ha"]}},
        "scopes": [], "answer": {"metrics": [{"name": "silhouette", "description": "s", "target": "> 0.2"}]},
    })
    task = CatalogTask(spec, tmp_path, tmp_path / "reproduce.py", definition_hash="d", task_hash="h")
    tables = extract_tables(task, tmp_path)
    assert [(t.name, t.notes) for t in tables] == [("counties", (note,)), ("county_yield", ())]
    readme = data_readme("t", tables)
    assert f"| relief_mean_m | float64 | m |\n\nNote: {note}\n\n## county_yield.parquet" in readme
    assert readme.count("Note:") == 1
