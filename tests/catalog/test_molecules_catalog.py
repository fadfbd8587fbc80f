"""Molecule tasks: structures staged as an SD file with no key, joined back only through InChIKeys."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from rdkit import Chem
from scibench_testing.domains import align_domain, synthesize_and_ingest
from scibench_testing.files import folder_bytes
from scibench_testing.limits import limits_with

from stages.catalog import NativeSpec, load_catalog
from stages.catalog_scopes import read_prompt_block
from stages.construction import annotate
from stages.construction.drawing import Query, extract_tables
from stages.construction.native import NativeStagingError, stage_native
from stages.construction.prompts import render_prompt
from stages.construction.scopes import TIMELESS, ResolvedScope, render_scope_block
from stages.construction.staging import stage_queries, stage_task
from stages.repository import read_table
from stages.synthesize import molecules

ROOT = Path(__file__).resolve().parents[2]
SDF = NativeSpec(kind="sdf", path="structures.sdf", variables=["canonical_smiles", "name"])


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("molecules")
    synthesize_and_ingest("molecules", molecules.Params(n_molecules=60), root,
                          {"numeric_tags": {"LOGS": "log10(mol/L)"}, "on_error": "quarantine"})
    align_domain("molecules", ["molecules"], root)
    return root / "repositories" / "molecules"


def scope_of(ids: tuple[str, ...]) -> ResolvedScope:
    return ResolvedScope("some", "sample_size", "some structures", "", "molecule_id", ids, TIMELESS, TIMELESS)


def test_the_sd_file_holds_the_structures_and_nothing_that_keys_them(repository: Path, tmp_path: Path):
    entities = read_table(repository, "entities")
    chosen = entities[entities["source_file"] == "molecules.sdf"].head(20)
    stage_native([SDF], repository, "molecule_id", chosen["molecule_id"].tolist(), TIMELESS, TIMELESS, tmp_path)
    text = (tmp_path / "structures.sdf").read_text()
    for leaked in ("LOGS", "molecule_id", *chosen["molecule_id"], *chosen["inchikey"]):
        assert leaked not in text
    records = [m for m in Chem.SDMolSupplier(str(tmp_path / "structures.sdf"))]
    assert len(records) == 20 and all(m is not None for m in records)
    assert sorted(Chem.MolToInchiKey(m) for m in records) == sorted(chosen["inchikey"])
    assert sorted(m.GetProp("_Name") for m in records) == sorted(chosen["name"])
    again = tmp_path / "again"
    again.mkdir()
    stage_native([SDF], repository, "molecule_id", chosen["molecule_id"].tolist(), TIMELESS, TIMELESS, again)
    assert folder_bytes(again) == {"structures.sdf": (tmp_path / "structures.sdf").read_bytes()}


def test_a_structure_column_that_is_not_there_is_named(repository: Path, tmp_path: Path):
    spec = SDF.model_copy(update={"variables": ["smiles", "name"]})
    with pytest.raises(NativeStagingError, match=r"lacks \['smiles'\]"):
        stage_native([spec], repository, "molecule_id", [], TIMELESS, TIMELESS, tmp_path)


def test_a_timeless_scope_block_names_no_period():
    block = render_scope_block(scope_of(("a", "b")))
    assert "1970" not in block and "(2 molecule_id values)" in block
    assert read_prompt_block(block, "Scope") == {"entity_key": "molecule_id", "entities": ["a", "b"]}


def test_the_annotator_joins_through_inchikeys_and_writes_its_checkpoints(repository: Path, tmp_path: Path):
    task = next(t for t in load_catalog(ROOT / "catalog", ["molecules"]) if t.spec.id == "molecules-weight-solubility")
    entities = read_table(repository, "entities")
    ids = tuple(sorted(entities.loc[(entities["source_file"] == "molecules.sdf") & entities["duplicate_of"].isna()
                                    & entities["logs_log10_mol_l"].notna(), "molecule_id"]))
    query = Query("q-mol", task.spec.id, task.task_hash, "some", "sample_size", "", len(ids), TIMELESS,
                  TIMELESS, render_prompt(task.spec, scope_of(ids), "q-mol"), ids)
    folder = tmp_path / "tasks" / task.spec.id
    stage_task(task, folder)
    staged, discards = stage_queries(task, extract_tables(task, repository), "molecule_id", [query], folder,
                                     repository)
    assert discards == [] and staged == [query]
    label, discard = annotate.label_query(task.spec, query, folder, limits_with(), [ROOT], "molecule_id")
    assert discard is None, discard
    truth = entities.set_index("molecule_id").loc[list(ids)]
    aligned = pd.DataFrame(label.checkpoints["aligned.parquet"]).set_index("molecule_id")
    assert (aligned["heavy_atoms"] == truth["heavy_atoms"]).all()
    expected = truth["mol_wt_g_mol"].corr(truth["logs_log10_mol_l"])
    assert label.gold["answer"] == pytest.approx(expected, abs=1e-4)
