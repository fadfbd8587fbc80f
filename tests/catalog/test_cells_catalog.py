"""Single-cell tasks: the 10x matrix staged with its own barcodes, joined to libraries only by suffix."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
from scibench_testing.domains import align_domain, synthesize_and_ingest
from scibench_testing.files import folder_bytes
from scibench_testing.limits import limits_with

from stages.catalog import NativeSpec, load_catalog
from stages.construction import annotate
from stages.construction.drawing import Query, extract_tables
from stages.construction.native import NativeStagingError, stage_native
from stages.construction.prompts import render_prompt
from stages.construction.scopes import TIMELESS, ResolvedScope
from stages.construction.staging import stage_queries, stage_task
from stages.sources.hdf.sparse import read_sparse_matrix
from stages.synthesize import hdf
from stages.synthesize.hdf import aggr

ROOT = Path(__file__).resolve().parents[2]
COUNTS = NativeSpec(kind="tenx_h5", path="counts.h5", variables=["Gene Expression", "Antibody Capture"])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, dict]:
    root = tmp_path_factory.mktemp("cells")
    raw = synthesize_and_ingest("hdf", hdf.Params(n_lat=4, n_lon=4, n_days=10, n_features=300, n_barcodes=400), root)
    tables = align_domain("cells", ["hdf"], root)
    return raw, root / "repositories" / "cells", tables


def test_every_cell_gets_the_library_its_suffix_names(built):
    raw, _, tables = built
    aggregation = pd.read_csv(raw / aggr.AGGREGATION_FILE)
    entities = tables["entities"]
    assert len(tables["libraries"]) == len(aggregation) == 12
    for cell in entities.sample(40, random_state=0).itertuples(index=False):
        row = aggregation.iloc[int(cell.cell_id.rsplit("-", 1)[1]) - 1]
        assert (cell.sample_id, cell.donor, cell.condition) == (row["sample_id"], row["donor"], row["condition"])
    sequences = entities["cell_id"].str.split("-").str[0]
    assert sequences.duplicated().any()  # joining on the 16 bases alone would be ambiguous
    matrix = read_sparse_matrix(raw / aggr.MATRIX_FILE)
    genes = (matrix.features["feature_type"] == "Gene Expression").to_numpy()
    totals = np.asarray(matrix.to_scipy()[genes].sum(axis=0)).ravel()
    expected = pd.Series(totals, index=matrix.barcodes)
    assert (entities.set_index("cell_id")["total_umis"] == expected[entities["cell_id"]].to_numpy()).all()


def test_the_staged_matrix_holds_the_query_cells_as_the_matrix_writes_them(built, tmp_path: Path):
    raw, repository, tables = built
    chosen = tables["entities"].query("donor == 'D2'")["cell_id"].tolist()
    stage_native([COUNTS], repository, "cell_id", chosen, TIMELESS, TIMELESS, tmp_path)
    staged = read_sparse_matrix(tmp_path / "counts.h5")
    assert sorted(staged.barcodes) == sorted(chosen)
    original = read_sparse_matrix(raw / aggr.MATRIX_FILE)
    columns = [list(original.barcodes).index(b) for b in staged.barcodes]
    assert (staged.to_scipy() != original.to_scipy()[:, columns]).nnz == 0
    with h5py.File(tmp_path / "counts.h5") as h5:
        assert [v.decode() for v in h5.attrs["library_ids"]] == tables["libraries"].sort_values(
            "gem_group")["sample_id"].tolist()
    again = tmp_path / "again"
    again.mkdir()
    stage_native([COUNTS], repository, "cell_id", chosen, TIMELESS, TIMELESS, again)
    assert folder_bytes(again) == {"counts.h5": (tmp_path / "counts.h5").read_bytes()}
    genes_only = COUNTS.model_copy(update={"variables": ["Gene Expression"]})
    stage_native([genes_only], repository, "cell_id", chosen, TIMELESS, TIMELESS, again / "x")
    assert set(read_sparse_matrix(again / "x" / "counts.h5").features["feature_type"]) == {"Gene Expression"}


def test_an_unknown_feature_type_is_named(built, tmp_path: Path):
    _, repository, tables = built
    spec = COUNTS.model_copy(update={"variables": ["Peaks"]})
    with pytest.raises(NativeStagingError, match=r"no features of type \['Peaks'\]"):
        stage_native([spec], repository, "cell_id", tables["entities"]["cell_id"].head(3).tolist(),
                     TIMELESS, TIMELESS, tmp_path)


def test_the_interferon_annotator_aligns_by_suffix_and_its_gold_is_rederived(built, tmp_path: Path):
    raw, repository, tables = built
    task = next(t for t in load_catalog(ROOT / "catalog", ["cells"]) if t.spec.id == "cells-interferon-response")
    entities = tables["entities"]
    ids = tuple(sorted(entities.loc[entities["donor"].isin(["D1", "D2"]), "cell_id"]))
    scope = ResolvedScope("two", "attribute", "two donors", "", "cell_id", ids, TIMELESS, TIMELESS)
    query = Query("q-cells", task.spec.id, task.task_hash, "two", "attribute", "", len(ids), TIMELESS,
                  TIMELESS, render_prompt(task.spec, scope, "q-cells"), ids)
    folder = tmp_path / "tasks" / task.spec.id
    stage_task(task, folder)
    staged, discards = stage_queries(task, extract_tables(task, repository), "cell_id", [query], folder, repository)
    assert discards == [] and staged == [query]
    public = folder / "public" / "q-cells"
    assert sorted(p.name for p in public.iterdir()) == ["README.md", "counts.h5", "libraries.parquet"]
    label, discard = annotate.label_query(task.spec, query, folder, limits_with(), [ROOT], "cell_id")
    assert discard is None, discard
    truth = entities.set_index("cell_id").loc[list(ids)]
    aligned = pd.DataFrame(label.checkpoints["aligned.parquet"]).set_index("cell_id").loc[list(ids)]
    assert (aligned["stimulated"] == (truth["condition"] == "stim").astype(int)).all()
    matrix = read_sparse_matrix(raw / aggr.MATRIX_FILE)
    counts = pd.DataFrame(matrix.to_scipy().toarray().T, index=matrix.barcodes,
                          columns=matrix.features["name"] + "|" + matrix.features["feature_type"])
    genes = [c for c in counts.columns if c.endswith("|Gene Expression")]
    score = counts[[f"{g}|Gene Expression" for g in aggr.ISGS]].sum(axis=1) / counts[genes].sum(axis=1)
    means = score.loc[list(ids)].groupby([truth["donor"], truth["condition"]]).mean().unstack()
    assert label.gold["answer"] == pytest.approx(float(np.log2(means["stim"] / means["ctrl"]).mean()), abs=1e-6)
