"""Multimodal gridcells tasks end to end on a tiny build: native staging, gold, checkpoints, attribution.

A query of `gridcells-ndvi-precipitation` is staged from a tiny gridcells repository (8 x 8 grid,
30 days, a 16 km mosaic), labelled by its annotator in the sandbox, and then answered by a real
agent program (`tests/data/agents/multimodal/agent.py`) that makes one chosen mistake; the scorer
must name that mistake's class from the checkpoints alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
import rasterio
from scibench_testing.domains import align_with_imagery
from scibench_testing.files import folder_bytes
from scibench_testing.limits import limits_with

from stages.catalog import load_catalog
from stages.construction import annotate
from stages.construction.drawing import Query, extract_tables
from stages.construction.native import NativeStagingError, stage_native
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.construction.staging import stage_queries, stage_task
from stages.domains.imagery_join import StaleImageryError
from stages.evaluation.program import AgentProgram
from stages.evaluation.runner import run_query
from stages.repository import read_table
from stages.scoring.query.attribution import attribute
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.scorer import score_query
from stages.synthesize import hdf

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "catalog"
AGENT = ROOT / "tests" / "data" / "agents" / "multimodal"
TINY = hdf.Params(n_lat=8, n_lon=8, n_days=30, n_features=200, n_barcodes=50)
TASK = "gridcells-ndvi-precipitation"


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gridcells")
    align_with_imagery("gridcells", "hdf", TINY, root)
    return root / "repositories" / "gridcells"


@pytest.fixture(scope="module")
def built(repository: Path, tmp_path_factory):
    """The task staged and labelled on one query of every cell over the first 20 days."""
    task = next(t for t in load_catalog(CATALOG, ["gridcells"]) if t.spec.id == TASK)
    cells = tuple(sorted(read_table(repository, "entities")["cell_id"].astype(str)))
    days = read_table(repository, "timeseries", ["date"])["date"]
    start = days.min()
    end = start + pd.Timedelta(days=19)
    scope = ResolvedScope("all_cells", "geographic", "every simulated cell", "", "cell_id", cells,
                          start, end)
    query = Query("q-test", task.spec.id, task.task_hash, "all_cells", "geographic", "", len(cells),
                  start, end, render_prompt(task.spec, scope, "q-test"), cells)
    folder = tmp_path_factory.mktemp("built") / "tasks" / TASK
    stage_task(task, folder)
    tables = extract_tables(task, repository)
    staged, discards = stage_queries(task, tables, "cell_id", [query], folder, repository)
    assert discards == [] and staged == [query]
    label, discard = annotate.label_query(task.spec, query, folder, limits_with(), [ROOT], "cell_id")
    assert discard is None, discard
    return task, query, folder, label


def test_the_grid_is_cut_to_the_query_and_keeps_no_generator_setting(built, repository: Path):
    task, query, folder, _ = built
    public = folder / "public" / query.query_id
    assert sorted(p.relative_to(public).as_posix() for p in public.rglob("*") if p.is_file()) == [
        "README.md", "entities.parquet", "grid.nc", "imagery/ndvi_20200715.tif"]
    with netCDF4.Dataset(public / "grid.nc") as grid:
        assert sorted(grid.variables) == ["crs", "lat", "lat_bnds", "lon", "lon_bnds", "precip", "time"]
        assert "seed" not in grid.ncattrs()
        assert grid["precip"].shape == (20, *grid["precip"].shape[1:])
        days = netCDF4.num2date(grid["time"][:], grid["time"].units)
        assert (days[0].day, days[-1].day) == (query.start.day, query.end.day)
        precip = grid["precip"][:]
    entities = read_table(repository, "entities")
    # every simulated (land) cell is in the query; the rectangle's ocean cells are fill
    assert int((~np.ma.getmaskarray(precip[0])).sum()) == len(entities)


def test_the_imagery_covers_the_cells_in_the_mosaic_projection(built, repository: Path):
    _, query, folder, _ = built
    with rasterio.open(folder / "public" / query.query_id / "imagery" / "ndvi_20200715.tif") as image:
        assert image.crs.to_epsg() == 5070 and image.descriptions == ("ndvi_20200715",)
        assert image.nodata == -9999.0 and image.count == 1
        band = image.read(1)
    assert ((band == -9999.0) | ((band >= -1) & (band <= 1))).all()
    readme = (folder / "public" / query.query_id / "README.md").read_text()
    assert "`grid.nc`: NetCDF-4 (CF) grid, variables precip" in readme
    assert "relief_mean_m" not in readme and "ndvi_mean" not in readme  # no joined statistic staged


def test_staging_twice_gives_the_same_bytes(built, repository: Path, tmp_path: Path):
    task, query, folder, _ = built
    again = tmp_path / "again"
    again.mkdir()
    stage_native(task.spec.data.native, repository, "cell_id", list(query.entities), query.start,
                 query.end, again)
    public = folder_bytes(folder / "public" / query.query_id)
    assert folder_bytes(again) == {k: v for k, v in public.items() if k not in ("README.md", "entities.parquet")}


def test_a_raw_file_changed_after_the_build_is_named(built, repository: Path, tmp_path: Path):
    task, query, _, _ = built
    inventory = read_table(repository, "native_files")
    grid = inventory[inventory["modality"] == "grid"].iloc[0]
    path = Path(grid["raw_dir"]) / grid["file"]
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\0")
        with pytest.raises(StaleImageryError, match="bucket_water_balance.nc"):
            stage_native(task.spec.data.native, repository, "cell_id", list(query.entities),
                         query.start, query.end, tmp_path)
    finally:
        path.write_bytes(original)
    with pytest.raises(NativeStagingError, match="no time step between 1999-01-01 and 1999-01-31"):
        stage_native(task.spec.data.native, repository, "cell_id", list(query.entities),
                     pd.Timestamp("1999-01-01").date(), pd.Timestamp("1999-01-31").date(), tmp_path / "x")


def test_the_gold_comes_with_both_checkpoints(built):
    _, _, _, label = built
    assert sorted(label.checkpoints) == ["aligned.parquet", "features.parquet"]
    aligned = pd.DataFrame(label.checkpoints["aligned.parquet"])
    assert list(aligned.columns) == ["cell_id", "n_pixels", "precip_mm_d"]
    assert (aligned["n_pixels"] > 0).all()
    assert -1 <= label.gold["answer"] <= 1
    assert label.tolerance == pytest.approx(max(0.005, 0.1 * label.bootstrap_sd), abs=1e-9)


@pytest.mark.parametrize(("mistake", "passed", "error"), [
    ("right", True, None),
    ("misaligned", False, "alignment"),
    ("nodata", False, "modeling"),
    ("spearman", False, "reasoning"),
    ("silent", False, "unattributed"),
])
def test_a_wrong_answer_is_attributed_from_the_checkpoints(built, mistake: str, passed: bool,
                                                           error: str | None):
    task, query, folder, label = built
    program = AgentProgram(argv=[sys.executable, "/agent/agent.py", mistake], agent_dir=AGENT)
    files = tuple(c.file for c in task.spec.checkpoints)
    attempt = run_query(query.prompt, folder / "public" / query.query_id, program, limits_with(), [ROOT],
                        collect=files)
    assert attempt.exit_code == 0, attempt.stderr
    execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error,
                          attempt.answer_text, attempt.answer_problem)
    grading = annotate.query_grading(folder, query.query_id, label)
    score = score_query(task.spec.answer, execution, label.gold, grading)
    assert (score.pass_rate == 1.0) is passed
    written = {name: f.data for name, f in attempt.files.items() if f.data is not None}
    assert attribute(task.spec, passed, written, label.checkpoints) == error
