"""Molecules source adapter: structures and data items from SDF, MOL and SMILES files (RDKit).

Raw layout: any number of files anywhere under ``raw_dir``, read in sorted path order and chosen
by extension (case-insensitive): ``.sdf``/``.sd`` (MDL SD files, V2000 or V3000 Molfiles each
followed by data items ``> <TAG>`` or ``>  <TAG>  (n)`` with one or more value lines and a blank
line, every record closed by ``$$$$``), ``.mol`` (one Molfile) and ``.smi``/``.smiles``
(``SMILES<space or tab>name`` per line, optional header line, ``#`` comments). Other files are
ignored. LF and CRLF line ends read identically; text is UTF-8. Parsing, record numbering and the
reasons of bad records are in `stages.sources.molecules.records`.

A molecule is identified by `molecule_id`, the content hash of its canonical isomeric SMILES, its
file (relative to ``raw_dir``) and its record number, so the same structure twice in one file
yields two molecules; the later ones name the first in `duplicate_of`. Descriptors are computed
by RDKit on the hydrogen-suppressed molecule; the Morgan fingerprint (radius 2, 2048 bits) is
stored as its on-bits. Data items go to a long `properties` table; a value is also parsed as a
number when it is one. Tags listed in `Params.numeric_tags` must hold numbers (or a missing-value
code, which becomes null) and carry the unit given there.

Data: the RDKit book data (rdkit/rdkit, BSD-3-Clause); its solubility set is Huuskonen (2000),
doi:10.1021/ci9901338. The synthetic generator's solubility follows Delaney (2004) ESOL,
doi:10.1021/ci034243x.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from rdkit import Chem, rdBase
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator

from stages.hashing import content_hash
from stages.sources.molecules.records import Parsed, Record, read_mol, read_sdf, read_smiles
from stages.tables import RawFormatError, Table, quarantine_table

__all__ = ["CITATION", "FORMATS", "LICENSE", "Params", "RawFormatError", "Record", "describe",
           "parse_number", "read", "read_mol", "read_records", "read_sdf", "read_smiles"]

CITATION = (
    "Huuskonen, J. (2000): Estimation of Aqueous Solubility for a Diverse Set of Organic Compounds"
    " Based on Molecular Topology, J. Chem. Inf. Comput. Sci. 40(3), 773-777,"
    " doi:10.1021/ci9901338; Delaney, J. S. (2004): ESOL: Estimating Aqueous Solubility Directly"
    " from Molecular Structure, J. Chem. Inf. Comput. Sci. 44(3), 1000-1005, doi:10.1021/ci034243x;"
    " RDKit: Open-source cheminformatics, https://www.rdkit.org"
)
LICENSE = "RDKit book data: BSD-3-Clause (rdkit/rdkit); synthetic molecules: generated, no restriction"
FORMATS: dict[str, Callable[[Path], Iterator[Parsed]]] = {
    ".sdf": read_sdf, ".sd": read_sdf, ".mol": read_mol, ".smi": read_smiles, ".smiles": read_smiles,
}
FINGERPRINT_RADIUS, FINGERPRINT_BITS = 2, 2048
SENTINELS = frozenset({-999.0, -9999.0, -99999.0})
DESCRIPTOR_UNITS = {
    "mol_wt_g_mol": "g/mol", "logp": "1", "tpsa_a2": "Å2", "hbd": "1", "hba": "1", "rings": "1",
    "heavy_atoms": "1", "rotatable_bonds": "1", "aromatic_proportion": "1",
}
MOLECULE_UNITS = {"source_file": "1", "record": "1", "name": "1", "canonical_smiles": "1",
                  "inchikey": "1", "duplicate_of": "1"} | DESCRIPTOR_UNITS
PROPERTY_UNITS = {"value_text": "1", "value_num": "per tag: see column unit", "unit": "1"}
_COUNTS = ("record", "hbd", "hba", "rings", "heavy_atoms", "rotatable_bonds")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=FINGERPRINT_RADIUS, fpSize=FINGERPRINT_BITS)


class Params(BaseModel):
    """Parameters of `ingest@molecules`."""

    model_config = ConfigDict(extra="forbid")
    numeric_tags: dict[str, str] = Field(default_factory=dict)  # SDF tag -> unit ("1" if none)
    missing_values: list[str] = Field(default_factory=lambda: ["NA", "N/A", "nan", "NaN"])
    on_error: Literal["raise", "quarantine"] = "raise"


def read(raw_dir: Path, params: Params) -> Iterator[Table]:
    """Yield the `molecules`, `properties`, `fingerprints` and `quarantine` tables.

    With `on_error="quarantine"` a bad record (or an empty file) goes to the quarantine table and
    every other record is kept; with "raise" the first one raises its RawFormatError.
    """
    errors: list[RawFormatError] = []
    molecules, properties, bits = [], [], []
    for path in _molecule_files(raw_dir, params, errors):
        source_file, first_of = path.relative_to(raw_dir).as_posix(), {}
        for parsed in read_records(path):
            checked = _check_items(path, parsed, params) if isinstance(parsed, Record) else parsed
            if isinstance(checked, RawFormatError):
                if params.on_error == "raise":
                    raise checked
                errors.append(checked)
                continue
            row, on_bits = describe(checked.mol)
            key = {"file": source_file, "record": checked.record, "smiles": row["canonical_smiles"]}
            molecule_id = content_hash(key)
            duplicate_of = first_of.setdefault(row["canonical_smiles"], molecule_id)
            molecules.append({"molecule_id": molecule_id, "source_file": source_file,
                              "record": checked.record, "name": checked.name, **row,
                              "duplicate_of": None if duplicate_of == molecule_id else duplicate_of})
            properties += [_property(molecule_id, item.tag, item.value, params)
                           for item in checked.items]
            bits += [(molecule_id, bit) for bit in on_bits]
    yield Table("molecules", _molecules_frame(molecules), ("molecule_id",), MOLECULE_UNITS)
    yield Table("properties", _properties_frame(properties), ("molecule_id", "tag"), PROPERTY_UNITS)
    fingerprints = pd.DataFrame(sorted(bits), columns=["molecule_id", "bit"])
    yield Table("fingerprints", fingerprints.astype({"molecule_id": "string", "bit": "int64"}),
                ("molecule_id", "bit"), {})
    yield quarantine_table(errors)


def read_records(path: Path) -> Iterator[Parsed]:
    """Yield the records (or per-record errors) of one file, with the reader for its extension."""
    reader = FORMATS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: not a molecule file (extensions: {', '.join(FORMATS)})")
    yield from reader(path)


def describe(mol: Chem.Mol) -> tuple[dict, list[int]]:
    """Canonical isomeric SMILES, InChIKey and descriptors of a molecule, and its Morgan on-bits."""
    heavy = Chem.RemoveHs(mol)
    atoms = heavy.GetNumHeavyAtoms()
    with rdBase.BlockLogs():  # InChI warns about undefined stereo: not a problem of the record
        inchikey = Chem.MolToInchiKey(heavy) or None
    aromatic = sum(atom.GetIsAromatic() for atom in heavy.GetAtoms() if atom.GetAtomicNum() > 1)
    row = {
        "canonical_smiles": Chem.MolToSmiles(heavy), "inchikey": inchikey,
        "mol_wt_g_mol": Descriptors.MolWt(heavy), "logp": Crippen.MolLogP(heavy),
        "tpsa_a2": Descriptors.TPSA(heavy), "hbd": Descriptors.NumHDonors(heavy),
        "hba": Descriptors.NumHAcceptors(heavy), "rings": Descriptors.RingCount(heavy),
        "heavy_atoms": atoms, "rotatable_bonds": Descriptors.NumRotatableBonds(heavy),
        "aromatic_proportion": aromatic / atoms if atoms else math.nan,
    }
    return row, list(_MORGAN.GetFingerprint(heavy).GetOnBits())


def parse_number(value: str | None) -> float | None:
    """The value as a float when it is one plain decimal number (no nan/inf), else None."""
    text = (value or "").strip()
    return float(text) if _NUMBER.fullmatch(text) else None


def _molecule_files(raw_dir: Path, params: Params, errors: list[RawFormatError]) -> list[Path]:
    paths = sorted(p for p in raw_dir.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS)
    if not paths:
        problem = RawFormatError(raw_dir, None, f"no molecule files ({', '.join(FORMATS)})")
        if params.on_error == "raise":
            raise problem
        errors.append(problem)
    return paths


def _check_items(path: Path, record: Record, params: Params) -> Record | RawFormatError:
    """Values of declared numeric tags must be numbers, missing-value codes or empty."""
    for item in record.items:
        if item.tag not in params.numeric_tags or item.value is None:
            continue
        text, number = item.value.strip(), parse_number(item.value)
        where = f"record {record.record}: "
        if number is None and text not in params.missing_values:
            return RawFormatError(path, item.line + 1, f"{where}value {item.value[:40]!r} of data "
                                  f"item <{item.tag}> is not a number")
        if number in SENTINELS:
            return RawFormatError(path, item.line + 1, f"{where}unexpected sentinel {number:g} in "
                                  f"data item <{item.tag}>")
    return record


def _property(molecule_id: str, tag: str, value: str | None, params: Params) -> tuple:
    declared = tag in params.numeric_tags
    if declared and value is not None and value.strip() in params.missing_values:
        value = None
    return molecule_id, tag, value, parse_number(value), params.numeric_tags.get(tag)


def _molecules_frame(rows: list[dict]) -> pd.DataFrame:
    columns = ["molecule_id", *list(MOLECULE_UNITS)]
    frame = pd.DataFrame(rows, columns=columns)
    dtypes = {c: "float64" for c in DESCRIPTOR_UNITS} | dict.fromkeys(_COUNTS, "int64")
    texts = ["molecule_id", "source_file", "name", "canonical_smiles", "inchikey", "duplicate_of"]
    frame = frame.astype(dtypes | dict.fromkeys(texts, "string"))
    return frame.sort_values("molecule_id", ignore_index=True)


def _properties_frame(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(sorted(rows, key=lambda r: (r[0], r[1])),
                         columns=["molecule_id", "tag", "value_text", "value_num", "unit"])
    return frame.astype({"molecule_id": "string", "tag": "string", "value_text": "string",
                         "value_num": "float64", "unit": "string"})
