"""SDA-Real: the table-only SDA templates on repository entities tables, answers checked independently.

A toy repository is written with the project's own writer; expected answers are computed here with
pandas/numpy from the frame as written (the complete-case rows picked by hand), not from the context.
"""

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scibench_testing.realdata import realdata

from stages.generate.sda.build import write
from stages.generate.sda.instances import candidates, derived
from stages.generate.sda.real import (
    GRAPH_BINDERS,
    REAL_TEMPLATES,
    GeneratorMissing,
    build_real,
    context_of,
    on_repository,
    real_context,
    templates_for,
)
from stages.generate.sda.templates import TEMPLATES
from stages.ingest import ingest
from stages.params import SdaParams
from stages.repository import SourceTables, write_tables
from stages.tables import Table

PARAMS = SdaParams(attempts=3)
N = 40
UNITS = {"biome": "1", "name": "1", "temp_c": "degC", "precip_mm": "mm", "flux_g_m2": "g/m2", "depth_m": "m",
         "sparse_x": "1", "const_k": "K", "flag": "1", "count_n": "1"}


def toy_frame() -> pd.DataFrame:
    """40 stations: 3 biomes, flux driven by temperature; one row misses depth_m, sparse_x misses 25 %."""
    rng = np.random.default_rng(7)
    temp = rng.uniform(0, 30, N)
    biome = np.array(["forest", "grass", "wetland"])[np.arange(N) % 3]
    frame = pd.DataFrame({
        "station_id": [f"st{i:02d}" for i in range(N)],
        "biome": biome,
        "name": [f"station {i}" for i in range(N)],  # 40 levels: not a group factor
        "temp_c": temp,
        "precip_mm": rng.uniform(200, 1500, N),
        "flux_g_m2": 2.0 * temp + (biome == "wetland") * 15.0 + rng.normal(0, 3, N) + 5.0,
        "depth_m": rng.uniform(0.2, 3.0, N),
        "sparse_x": rng.normal(size=N),
        "const_k": 273.15,
        "flag": np.arange(N) % 2 == 0,
        "count_n": rng.integers(0, 50, N),
    })
    frame.loc[5, "depth_m"] = np.nan
    frame.loc[::4, "sparse_x"] = np.nan
    return frame


def write_repository(folder, frame, keys=("station_id",)):
    units = {c: UNITS[c] for c in frame.columns if c not in keys}
    write_tables(folder, [Table("entities", frame, keys, units)], {"kind": "repository", "domain": folder.name})


@pytest.fixture(scope="module")
def repositories(tmp_path_factory):
    root = tmp_path_factory.mktemp("repositories")
    write_repository(root / "toy", toy_frame())
    write_repository(root / "tiny", toy_frame().head(10))  # too few rows: skipped
    write_tables(root / "series_only", [Table("timeseries", pd.DataFrame({"t": [1, 2]}), ("t",))], {})
    return root


@pytest.fixture(scope="module")
def toy(repositories):
    return real_context(repositories / "toy")


@pytest.fixture(scope="module")
def kept():
    """The complete-case rows the agent should see, by hand: row 5 misses depth_m (sparse_x is dropped)."""
    return toy_frame().drop(index=5).sort_values("station_id", ignore_index=True)


# --- the scenario describes the real columns ------------------------------------------------------

def test_numeric_columns_become_variables_with_units_and_observed_ranges(toy, kept):
    names = ["count_n", "depth_m", "flux_g_m2", "precip_mm", "temp_c"]  # not sparse_x, const_k, flag, text
    assert [v.name for v in toy.scenario.variables] == names
    assert [v.unit for v in toy.scenario.variables] == ["1", "m", "g/m2", "mm", "degC"]
    for variable in toy.scenario.variables:
        assert (variable.low, variable.high) == (kept[variable.name].min(), kept[variable.name].max())
    assert toy.scenario.group == "biome" and toy.levels() == ("forest", "grass", "wetland")
    assert toy.scenario.domain == "toy" and toy.scenario.mechanisms == ()
    assert list(toy.table.columns) == ["sample_id", "biome", *names]
    assert toy.table["sample_id"].tolist() == kept["station_id"].tolist()


def test_repositories_without_a_usable_entities_table_are_skipped(repositories):
    assert real_context(repositories / "tiny") is None
    assert real_context(repositories / "series_only") is None


# --- (a) answers equal an independent computation --------------------------------------------------

def test_group_mean_matches_pandas(toy, kept):
    binding = {"statistic": "mean", "variable": "flux_g_m2", "level": "wetland"}
    expected = kept.loc[kept["biome"] == "wetland", "flux_g_m2"].mean()
    assert derived(TEMPLATES["descriptive.group_statistic"], toy, binding) == pytest.approx(expected, rel=1e-12)


def test_correlation_interval_matches_fisher_z_by_hand(toy, kept):
    r = kept["temp_c"].corr(kept["precip_mm"])
    expected = math.tanh(math.atanh(r) + 1.959963984540054 / math.sqrt(len(kept) - 3))
    binding = {"x": "temp_c", "y": "precip_mm", "bound": "upper"}
    assert derived(TEMPLATES["inferential.correlation_interval"], toy, binding) == pytest.approx(expected, rel=1e-10)


def test_welch_t_matches_the_formula(toy, kept):
    a = kept.loc[kept["biome"] == "forest", "flux_g_m2"]
    b = kept.loc[kept["biome"] == "wetland", "flux_g_m2"]
    expected = (a.mean() - b.mean()) / math.sqrt(a.var() / len(a) + b.var() / len(b))
    binding = {"variable": "flux_g_m2", "a": "forest", "b": "wetland"}
    assert derived(TEMPLATES["inferential.welch_t"], toy, binding) == pytest.approx(expected, rel=1e-10)


def test_holdout_rmse_matches_a_least_squares_fit_on_the_first_rows(toy, kept):
    n_train = int(len(kept) * 0.7)
    design = np.column_stack([np.ones(len(kept)), kept["precip_mm"], kept["temp_c"]])
    coefficients, *_ = np.linalg.lstsq(design[:n_train], kept["flux_g_m2"][:n_train], rcond=None)
    residuals = kept["flux_g_m2"][n_train:] - design[n_train:] @ coefficients
    binding = {"target": "flux_g_m2", "f1": "precip_mm", "f2": "temp_c", "n_train": n_train,
               "first_test": kept["station_id"][n_train]}
    expected = math.sqrt((residuals ** 2).mean())
    assert derived(TEMPLATES["predictive.holdout_rmse"], toy, binding) == pytest.approx(expected, rel=1e-10)


def test_strongest_association_is_the_top_spearman_column(toy, kept):
    others = ["count_n", "depth_m", "precip_mm", "temp_c"]
    strength = {name: abs(kept[name].rank().corr(kept["flux_g_m2"].rank())) for name in others}
    assert max(strength, key=strength.get) == "temp_c"
    assert derived(TEMPLATES["exploratory.strongest_association"], toy, {"target": "flux_g_m2"}) == "temp_c"


# --- (b) generator-dependent templates never run ---------------------------------------------------

def test_only_table_templates_apply_and_the_rest_cannot_bind_on_real_data(toy):
    excluded = set(TEMPLATES) - set(REAL_TEMPLATES)
    assert excluded == {t for t in TEMPLATES if TEMPLATES[t].task_type in ("causal", "mechanistic")} | GRAPH_BINDERS
    assert len(REAL_TEMPLATES) == 27
    for template_id in sorted(excluded):  # no graph, no mechanisms: not one would bind anyway
        for seed in range(3):
            try:
                binding = TEMPLATES[template_id].bind(toy, np.random.default_rng(seed))
            except (StopIteration, KeyError, ValueError):
                binding = None
            assert binding is None, template_id


def test_a_real_context_refuses_to_replay_a_generator(toy):
    assert toy.simulation.true == {} and "seed" not in toy.simulation.hidden
    with pytest.raises(GeneratorMissing, match="real data has no generator"):
        toy.intervened({"temp_c": 10.0})


def test_built_instances_come_from_table_templates_only(repositories):
    generated = build_real(repositories, PARAMS, "default")
    assert generated.instances
    assert {i["template"] for i in generated.instances} <= set(REAL_TEMPLATES)
    assert {i["task_type"] for i in generated.instances} == {"descriptive", "inferential", "exploratory",
                                                             "predictive"}
    assert {i["domain"] for i in generated.instances} == {"toy"} and set(generated.datasets) == {"real_toy"}


def test_a_table_without_a_group_factor_skips_the_group_templates(kept):
    frame = kept.drop(columns=["biome", "name"])
    context = context_of("plain", frame, ("station_id",), UNITS)
    assert context.levels() == () and "biome" not in context.table
    templates = templates_for(context)
    assert templates and all("{group}" not in t.text for t in templates)
    assert on_repository(context, PARAMS).instances


# --- (c) determinism --------------------------------------------------------------------------------

def test_the_same_repositories_and_seed_give_identical_files(repositories, tmp_path):
    write(build_real(repositories, PARAMS, "tiny"), tmp_path / "one")
    write(build_real(repositories, PARAMS, "tiny"), tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert len(files) == 5
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    hidden = json.loads((tmp_path / "one" / "private" / "hidden.json").read_text())
    assert hidden["real_toy"]["origin"] == "real" and hidden["real_toy"]["columns_dropped"] == ["const_k", "sparse_x"]


# --- (d) the real CAMELS-US attributes --------------------------------------------------------------

@pytest.fixture(scope="module")
def camels(tmp_path_factory):
    """The ingested real attributes (all 671 basins) as the `camels` repository's entities table."""
    raw = realdata("camels_us")
    root = tmp_path_factory.mktemp("camels")
    ingest("camels_us", raw, {}, root / "sources" / "camels_us")
    source = SourceTables(root / "sources" / "camels_us")
    write_tables(root / "repositories" / "camels", [source.copy("attributes", "entities")],
                 {"kind": "repository", "domain": "camels", "entity_key": "gauge_id"})
    attributes = source["attributes"]
    return real_context(root / "repositories" / "camels"), attributes, root / "repositories"


def test_real_camels_attributes_give_instances_whose_answers_re_derive(camels):
    context, attributes, _ = camels
    generated = on_repository(context, PARAMS)
    assert len(generated.instances) >= 50
    assert {i["task_type"] for i in generated.instances} == {"descriptive", "inferential", "exploratory",
                                                             "predictive"}
    for instance in generated.instances:
        template = REAL_TEMPLATES[instance["template"]]
        assert derived(template, context, instance["binding"]) == instance["answer"], instance["question"]
        assert instance["options"]["ABCD".index(instance["correct_option"])] == instance["answer"]


def test_real_camels_table_is_the_complete_rows_grouped_by_precipitation_timing(camels):
    context, attributes, _ = camels
    numeric = [c for c in attributes.columns if attributes[c].dtype == "float64" and not c.startswith("header_")]
    complete = attributes.dropna(subset=numeric)  # header_* (4 basins with forcing files) are dropped columns
    assert len(context.table) == len(complete) < len(attributes) == 671
    assert context.scenario.group == "high_prec_timing" and context.levels() == ("djf", "jja", "mam", "son")
    expected = complete.loc[complete["high_prec_timing"] == "son", "p_mean_mm_d"].median()
    binding = {"statistic": "median", "variable": "p_mean_mm_d", "level": "son"}
    assert derived(TEMPLATES["descriptive.group_statistic"], context, binding) == expected
    assert context.scenario.variable("p_mean_mm_d").unit == "mm/d"


def test_real_camels_build_selects_per_pair(camels):
    _, _, repositories = camels
    generated = build_real(repositories, PARAMS, "tiny")
    assert len(generated.instances) == 4 * PARAMS.per_pair["tiny"]  # 4 task types of the one domain
    assert {i["domain"] for i in generated.instances} == {"camels"}


def test_candidates_of_a_causal_template_on_real_data_are_none(camels):
    context, _, _ = camels
    rejected = Counter()
    assert candidates(TEMPLATES["causal.do_mean"], context, 1, 3, rejected) == []
    assert rejected == {"no_binding": 3}
