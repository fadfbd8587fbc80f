"""The `molecules` aligner: entities with pivoted numeric properties, properties, fingerprints."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scibench_testing.realdata import REALDATA, requires_realdata

from stages.domains import molecules as domain
from stages.repository import SourceTables, validate_table, write_tables
from stages.sources import molecules as source
from stages.synthesize import molecules as synthesize

MOLECULES = REALDATA / "molecules_rdkit"
DESCRIPTORS = list(source.DESCRIPTOR_UNITS)
MOLFILE = """{name}
     RDKit          2D

  1  0  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 {element}   0  0  0  0  0  0  0  0  0  0  0  0
M  END
"""


def inputs_for(raw_dir: Path, folder: Path, **params) -> dict[str, dict]:
    """What `stages.align.align` hands the aligner: the source's frames and its manifest."""
    write_tables(folder, list(source.read(raw_dir, source.Params(**params))), {})
    return {"molecules": SourceTables(folder)}


def aligned(raw_dir: Path, folder: Path, **params) -> dict[str, domain.Table]:
    tables = {t.name: t for t in domain.align(inputs_for(raw_dir, folder / "source", **params))}
    for table in tables.values():
        validate_table(table)
    return tables


def sdf(path: Path, records: list[tuple[str, str, str]]) -> None:
    """Records of one atom each: (name, element, data items text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(MOLFILE.format(name=n, element=e) + items + "$$$$\n" for n, e, items in records))


@requires_realdata("molecules_rdkit")
def test_real_files_align_into_entities_with_pivoted_numeric_properties(tmp_path):
    tables = aligned(MOLECULES, tmp_path, on_error="quarantine", numeric_tags={"SOL": "log10(mol/L)"})
    assert list(tables) == ["entities", "properties", "fingerprints"]
    entities = tables["entities"]
    pivoted = ["b_mmffld_minimization_converged_opls_2005", "cluster", "id", "model_ccratio",
               "r_mmffld_potential_energy_opls_2005", "r_mmffld_rms_derivative_opls_2005",
               "sol_log10_mol_l"]
    assert list(entities.frame.columns) == ["molecule_id", "source_file", "record", "name",
                                            "canonical_smiles", "inchikey", "duplicate_of",
                                            *DESCRIPTORS, *pivoted]
    assert entities.units["sol_log10_mol_l"] == "log10(mol/L)"
    assert entities.units["cluster"] == "unspecified" and entities.units["tpsa_a2"] == "Å2"
    frame = entities.frame.set_index(["source_file", "record"])
    assert len(frame) == 1025 + 47 + 1 + 1 + 10
    assert frame.loc[("solubility.train.sdf", 1), ["name", "sol_log10_mol_l", "id"]].tolist() == [
        "n-pentane", -3.18, 1.0]
    assert frame.loc[("cdk2.sdf", 1), "r_mmffld_potential_energy_opls_2005"] == -78.6454
    assert frame["sol_log10_mol_l"].notna().sum() == 1025 and frame["cluster"].notna().sum() == 47
    assert frame.loc[("solubility.train.sdf", 1), "mol_wt_g_mol"] == pytest.approx(72.151)
    tags = set(tables["properties"].frame["tag"])
    assert {"SOL_classification", "MODEL.SOURCE", "s_st_Chirality_1"} <= tags  # text stays long
    assert len(tables["fingerprints"].frame) > 0


def test_synthetic_repository_has_logs_for_the_sdf_molecules_only(tmp_path):
    synthesize.write(tmp_path / "raw", synthesize.Params(n_molecules=50))
    tables = aligned(tmp_path / "raw", tmp_path, on_error="quarantine",
                     numeric_tags={"LOGS": "log10(mol/L)"})
    frame = tables["entities"].frame
    has_logs = frame.groupby("source_file")["logs_log10_mol_l"].apply(lambda v: v.notna().mean())
    assert has_logs.to_dict() == {"invalid_records.sdf": 1.0, "molecules.sdf": 1.0,
                                  "molecules_subset.smi": 0.0}
    assert tables["entities"].units["logs_log10_mol_l"] == "log10(mol/L)"
    assert "logs_classification" not in frame.columns and "note" not in frame.columns


def test_a_tag_with_one_non_numeric_value_stays_text_and_missing_tags_are_null(tmp_path):
    sdf(tmp_path / "raw" / "a.sdf", [("one", "C", "> <MP>\n12.5\n\n> <PKA>\n4\n\n"),
                                     ("two", "N", "> <MP>\n>300\n\n"),
                                     ("three", "O", "> <MP>\n\n")])
    frame = aligned(tmp_path / "raw", tmp_path)["entities"].frame.set_index("record").sort_index()
    assert "mp" not in frame.columns  # '>300' is not a number: no silent null in a numeric column
    assert frame["pka"].isna().tolist() == [False, True, True]
    assert frame.loc[1, "pka"] == 4.0


def test_column_name_clashes_and_mixed_units_are_errors(tmp_path):
    sdf(tmp_path / "a" / "a.sdf", [("one", "C", "> <Mp>\n1.5\n\n> <MP>\n2\n\n")])
    with pytest.raises(ValueError, match="^property <Mp> would become column 'mp', as does MP$"):
        aligned(tmp_path / "a", tmp_path / "out_a")
    sdf(tmp_path / "b" / "b.sdf", [("one", "C", "> <Rings>\n1\n\n")])
    with pytest.raises(ValueError, match="^property <Rings> would become column 'rings', as does a "
                                         "molecules column$"):
        aligned(tmp_path / "b", tmp_path / "out_b")
    properties = pd.DataFrame({"molecule_id": ["a", "b"], "tag": ["W", "W"], "value_text": ["1", "2"],
                               "value_num": [1.0, 2.0], "unit": ["g", "kg"]}).astype("string")
    with pytest.raises(ValueError, match=r"^property <W> has more than one unit: \['g', 'kg'\]$"):
        domain.pivot_numeric(properties.astype({"value_num": "float64"}), reserved=set())


def test_snake_case_of_sdf_tags():
    assert [domain.snake_case(tag) for tag in (
        "SOL_classification", "MODEL.CCRATIO", "r_mmffld_Potential_Energy-OPLS_2005", "logP", "pKa",
        "25C value", "log10(mol/L)")] == [
        "sol_classification", "model_ccratio", "r_mmffld_potential_energy_opls_2005", "log_p", "p_ka",
        "prop_25c_value", "log10_mol_l"]


def test_aligned_tables_write_byte_identically(tmp_path):
    sdf(tmp_path / "raw" / "a.sdf", [("one", "C", "> <X>\n1\n\n"), ("two", "N", "> <X>\n2\n\n")])
    for run in ("a", "b"):
        tables = domain.align(inputs_for(tmp_path / "raw", tmp_path / run / "source"))
        write_tables(tmp_path / run / "repo", tables, {"domain": "molecules"})
    for path in sorted((tmp_path / "a" / "repo").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / "repo" / path.name).read_bytes(), path.name
    entities = pd.read_parquet(tmp_path / "a" / "repo" / "entities.parquet")
    assert entities.sort_values("record")["x"].tolist() == [1.0, 2.0]
