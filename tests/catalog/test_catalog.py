"""The whole catalog as a benchmark reviewer reads it: scale, coverage, tags, sources and leakage.

ST-Bench's reference: 100 tasks (25 CAMELS, 24 CropBench, 40 MethaneWet, plus a control set), all
16 categories, 17 easy / 49 medium / 34 hard, ~20 scopes per task and 2,067 queries.
"""

from __future__ import annotations

import ast
import inspect
import re
import shutil
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
import yaml
from scibench_testing.annotators import CATALOG

from stages.catalog import HARNESS_METRICS, STBENCH_CATEGORIES, load_catalog, load_scopes, load_task
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.scoring.query import metrics

DOMAINS = ["camels", "control", "cropbench", "methanewet"]
# Columns derived from a task's target: staging one would hand the agent (part of) the answer.
DERIVED = {
    "fch4_nmol_m2_s": {"fch4_f_nmol_m2_s", "fch4_mean_nmol_m2_s", "fch4_f_annoptlm_mean_nmol_m2_s",
                       "fch4_measured_days"},
    "yield_t_ha": {"production_t", "yield_bu_ac"},
    "qobs_mm_d": {"q_mean_mm_d", "runoff_ratio", "baseflow_index", "stream_elas", "q5_mm_d", "q95_mm_d",
                  "high_q_freq_d_yr", "high_q_dur_d", "low_q_freq_d_yr", "low_q_dur_d", "zero_q_freq",
                  "hfd_mean_d", "slope_fdc", "qobs_cfs"},
}
DOI = re.compile(r"10\.\d{4,9}/\S+")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(CATALOG, DOMAINS)


def test_the_catalog_has_st_bench_scale_in_its_proportions(catalog):
    graded = [t for t in catalog if t.spec.truth is not None and t.spec.answer.metrics]
    by_domain = Counter(t.spec.domain for t in graded)
    assert len(graded) >= 100
    assert by_domain["camels"] >= 24 and by_domain["cropbench"] >= 24
    assert by_domain["methanewet"] >= 38 and by_domain["control"] >= 10


def test_every_category_has_at_least_four_tasks_and_difficulty_is_near_st_bench(catalog):
    categories = Counter(t.spec.category for t in catalog)
    assert {c: categories[c] for c in STBENCH_CATEGORIES if categories[c] < 4} == {}
    difficulty = Counter(t.spec.difficulty for t in catalog)
    shares = {level: difficulty[level] / len(catalog) for level in ("easy", "medium", "hard")}
    for level, reference in {"easy": 0.17, "medium": 0.49, "hard": 0.34}.items():
        assert abs(shares[level] - reference) <= 0.12, (level, shares)


def test_every_task_carries_all_four_tag_axes_and_a_source(catalog):
    for task in catalog:
        tags = task.spec.tags
        assert tags.capability and tags.pipeline_stage and tags.cognitive_skill and tags.mas_challenge, task.spec.id
        assert len(task.spec.source.citation) > 40, task.spec.id
        if task.spec.source.doi:
            assert DOI.fullmatch(task.spec.source.doi), task.spec.id


def test_query_pools_reach_two_thousand_queries_at_full_with_room_for_discards(catalog):
    # `full` keeps up to 22 verified queries per task; ~15 % of drawn queries are discarded (mostly at
    # verify), so each task lists 26 or more scopes to replace them (checked to resolve at `full`
    # without near-duplicates when they were chosen). At `full` about half the methanewet tasks keep
    # 25-60 % of their queries (their gold loses to a reference blend), so every methanewet task lists
    # every scope of its record: the half-hourly ones 70, the daily ones 56.
    assert all(len(t.spec.scopes) >= 26 for t in catalog), [t.spec.id for t in catalog if len(t.spec.scopes) < 26]
    assert sum(min(len(t.spec.scopes), 20) for t in catalog) >= 2000
    methane = [t for t in catalog if t.spec.domain == "methanewet"]
    assert all(len(t.spec.scopes) >= 56 for t in methane), [t.spec.id for t in methane if len(t.spec.scopes) < 56]


def test_the_short_record_and_one_year_tasks_draw_only_windows_that_short(catalog):
    # Their question is about a short record: a longer slice added to fill the pool would change it.
    longest = {"cropbench-short-record-bootstrap": 8, "camels-autoregressive-nowcast": 1}
    for task in (t for t in catalog if t.spec.id in longest):
        scopes = load_scopes(CATALOG / task.spec.domain)
        windows = [scopes[name].years for name in task.spec.scopes]
        assert all(w is not None and w[1] - w[0] + 1 <= longest[task.spec.id] for w in windows), task.spec.id


def test_every_domain_bounds_the_size_of_one_query(catalog):
    # Without a bound a `full` CAMELS query covered up to 671 basins x 35 years: ~100 s per annotator
    # run against ~4 s at `default`, and ~18 h for the full build.
    for domain in DOMAINS:
        scopes = load_scopes(CATALOG / domain).values()
        assert all(s.max_entities is not None and s.max_years is not None for s in scopes), domain


def test_each_domain_shares_one_annotator_library_and_scripts_stay_thin(catalog):
    for domain in DOMAINS:
        library = sorted((CATALOG / domain / "annotator_lib").glob("*.py"))
        assert 1 <= len(library) <= 5, domain  # one library, split by meaning into a few modules at most
        assert all(len(p.read_text().splitlines()) <= 300 for p in library), domain
    long = {t.spec.id: n for t in catalog if (n := len(t.reproduce.read_text().splitlines())) > 120}
    assert long == {}


def test_annotators_use_the_harness_metrics_and_define_none_of_their_own(catalog):
    """A gold's reported estimate is computed by the formula grading uses, mounted as `metrics`."""
    graded = {name for name, _ in inspect.getmembers(metrics, inspect.isfunction) if not name.startswith("_")}
    own = {f"{path.relative_to(CATALOG)}:{node.name}" for path in CATALOG.rglob("*.py")
           for node in ast.walk(ast.parse(path.read_text()))
           if isinstance(node, ast.FunctionDef) and node.name in graded}
    assert own == set()
    assert all(HARNESS_METRICS in task.annotator_lib for task in catalog)
    assert HARNESS_METRICS == Path(metrics.__file__).resolve()


def _rendered(task) -> str:
    scope = ResolvedScope("s", "geographic", "a scope", "", "id", ("a", "b", "c", "d"),
                          date(2001, 1, 1), date(2004, 12, 31))
    return render_prompt(task.spec, scope, "q-test")


def test_no_prompt_names_its_source_or_a_doi(catalog):
    for task in catalog:
        prompt = _rendered(task)
        assert not DOI.search(prompt), task.spec.id
        assert "et al" not in prompt, task.spec.id
        first_author = re.match(r"\s*([A-Z][A-Za-z'\-]+)", task.spec.source.citation)
        if first_author:  # cited as "Author et al." or "Author (2019)"; a method name may keep it
            cited = re.compile(rf"\b{first_author.group(1)}\b[^.\n]{{0,20}}(et al|\(?(19|20)\d\d\b)")
            assert not cited.search(prompt), (task.spec.id, first_author.group(1))
        assert not re.search(r"\b[A-Z][a-z]+ (and [A-Z][a-z]+ )?\(?(19|20)\d\d\)", prompt), task.spec.id


def test_no_task_stages_a_column_derived_from_its_target(catalog):
    for task in catalog:
        if task.spec.truth is None:
            continue
        staged = {c for columns in task.spec.data.tables.values() for c in columns}
        assert not staged & DERIVED.get(task.spec.truth.column, set()), task.spec.id



def test_a_task_hash_covers_its_content_but_not_its_scope_list(tmp_path):
    source = load_catalog(CATALOG, ["control"])[0]
    folder = shutil.copytree(source.folder, tmp_path / "control" / source.spec.id)
    shutil.copytree(source.folder.parent / "annotator_lib", tmp_path / "control" / "annotator_lib")
    shutil.copytree(CATALOG / "annotator_common", tmp_path / "annotator_common")
    text = (folder / "task.yaml").read_text()

    def hashes() -> tuple[str, str]:
        task = load_task(folder)
        return task.definition_hash, task.task_hash

    assert hashes() == (source.definition_hash, source.task_hash)
    fewer = yaml.safe_load(text) | {"scopes": source.spec.scopes[:-1]}
    (folder / "task.yaml").write_text(yaml.safe_dump(fewer, sort_keys=False))
    assert load_task(folder).spec.scopes == source.spec.scopes[:-1]
    assert hashes() == (source.definition_hash, source.task_hash)
    (folder / "task.yaml").write_text(yaml.safe_dump(fewer | {"prompt": fewer["prompt"] + "More.\n"}))
    assert hashes()[0] != source.definition_hash and hashes()[1] != source.task_hash
    # The reproduction code versions the task (journal records are run again) but not its queries.
    (folder / "task.yaml").write_text(text)
    (folder / "reproduce.py").write_text((folder / "reproduce.py").read_text() + "\n# edited\n")
    assert hashes()[0] == source.definition_hash and hashes()[1] != source.task_hash
    assert load_task(folder).query_id("block") == source.query_id("block")
    edited = hashes()[1]
    (tmp_path / "annotator_common" / "annotator_common.py").write_text("# a shared library edited\n")
    assert hashes()[0] == source.definition_hash and hashes()[1] not in {source.task_hash, edited}


def test_the_libraries_of_a_task_hash_are_in_an_order_no_checkout_path_changes(tmp_path):
    """Sorted by absolute path, the harness's metrics came first in a checkout under /check and
    last under /work, and every task hash moved with the checkout."""
    source = load_catalog(CATALOG, ["control"])[0]
    shutil.copytree(source.folder, tmp_path / "control" / source.spec.id)
    shutil.copytree(source.folder.parent / "annotator_lib", tmp_path / "control" / "annotator_lib")
    shutil.copytree(CATALOG / "annotator_common", tmp_path / "annotator_common")
    for task in (source, load_task(tmp_path / "control" / source.spec.id)):
        folders = [path.parent.name for path in task.annotator_lib]
        common, lib = folders.count("annotator_common"), folders.count("annotator_lib")
        assert common and lib
        assert folders == ["annotator_common"] * common + ["annotator_lib"] * lib + ["query"]
        assert task.annotator_lib[-1] == HARNESS_METRICS
