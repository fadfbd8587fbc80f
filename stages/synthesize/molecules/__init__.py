"""Synthetic molecules in SDF and SMILES files, with an ESOL-like aqueous solubility.

Writes under `out_dir` what `stages.sources.molecules` reads::

    molecules.sdf          n_molecules records (V2000, 2-D coordinates, RDKit SDWriter)
    molecules_subset.smi   a header, a comment and `SMILES<tab>name` for about smiles_fraction
    invalid_records.sdf    deliberately bad records between good ones, for the quarantine path

Each SDF record carries the data items ``ID``, ``NAME``, ``LOGS`` (log10 of the solubility in
mol/L, two decimals), ``LOGS_classification`` (``(A) low`` / ``(B) medium`` / ``(C) high`` as in
the RDKit solubility set) and ``SMILES``; every 25th also a two-line ``NOTE``. Molecules are
assembled from fragments (`assembly`) and LOGS follows Delaney's ESOL equation plus
noise. Molecule i depends only on (seed, i), so a smaller file is a prefix of a larger one. RDKit
writes the program line ``     RDKit          2D`` without a timestamp; `write` checks that, so the
files are byte-identical for the same params (and RDKit version).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rdkit import Chem
from rdkit.Chem import rdDepictor

from stages.synthesize.molecules.assembly import Synthetic, solubility_class, synthesize

PROGRAM_LINE = "     RDKit          2D"
TAGS = ("ID", "NAME", "LOGS", "LOGS_classification", "SMILES", "NOTE")
ODD_NAMES = ("{}ʹ-isomer", "α-{}", "{} (Δ-form)")  # odd characters as in real files (UTF-8)


class Params(BaseModel):
    """Parameters of `synthesize@molecules`."""

    model_config = ConfigDict(extra="forbid")
    seed: int = 42
    n_molecules: int = Field(ge=1, le=200_000)
    smiles_fraction: float = Field(0.1, ge=0.0, le=1.0)
    noise_sd: float = Field(0.3, ge=0.0, le=3.0)  # log10 units


def write(out_dir: Path, params: Params) -> None:
    """Generate `molecules.sdf`, `molecules_subset.smi` and `invalid_records.sdf` under `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    molecules = [synthesize(np.random.default_rng([params.seed, 1, i]), params.noise_sd)
                 for i in range(params.n_molecules)]
    names = [_name(i) for i in range(params.n_molecules)]
    records = [_record(i, name, m) for i, (name, m) in enumerate(zip(names, molecules, strict=True))]
    _write_text(out_dir / "molecules.sdf", sd_text(records, TAGS))
    chosen = np.random.default_rng([params.seed, 2]).random(params.n_molecules) < params.smiles_fraction
    rows = [f"{records[i].GetProp('SMILES')}\t{names[i]}" for i in np.flatnonzero(chosen)]
    lines = ["# synthetic molecules: a subset of molecules.sdf", "SMILES\tName", *rows]
    _write_text(out_dir / "molecules_subset.smi", "\n".join(lines) + "\n")
    _write_text(out_dir / "invalid_records.sdf", invalid_records())


def sd_text(mols: list[Chem.Mol], tags: tuple[str, ...]) -> str:
    """The SD file RDKit's SDWriter writes for `mols` (data items `tags`, in that order)."""
    buffer = io.StringIO()
    writer = Chem.SDWriter(buffer)
    writer.SetProps(list(tags))
    for mol in mols:
        writer.write(mol)
    writer.close()
    text = buffer.getvalue()
    for record in text.split("$$$$\n")[:-1]:
        program = record.split("\n")[1]
        if program != PROGRAM_LINE:  # a timestamp here would make the bytes differ run to run
            raise RuntimeError(f"RDKit wrote the program line {program!r}, not {PROGRAM_LINE!r}")
    return text


def invalid_records() -> str:
    """Seven records: good, bad valence, good, bad counts line, bad data header, junk LOGS, truncated.

    With `numeric_tags: {LOGS: ...}` the reader keeps records 1 and 3 and quarantines the others.
    """
    good = ("CCO", "ethanol"), ("CC(C)(C)C", "pentavalent carbon"), ("Oc1ccccc1", "phenol"), (
        "CCN", "bad counts line"), ("CCCl", "bad data header"), ("CCBr", "junk solubility"), (
        "CCCC", "truncated")
    mols = []
    for smiles, name in good:
        mol = Chem.MolFromSmiles(smiles)
        mol.SetProp("_Name", name)
        mol.SetProp("NAME", name)
        mol.SetProp("LOGS", "-0.50")
        rdDepictor.Compute2DCoords(mol)
        mols.append(mol)
    records = [block + "$$$$\n" for block in sd_text(mols, ("NAME", "LOGS")).split("$$$$\n")[:-1]]
    records[1] = records[1].replace("\n  1  2  1  0\n", "\n  1  2  2  0\n")  # C with valence 5
    records[3] = records[3].replace("  3  2  0  0", " x3  2  0  0", 1)
    records[4] = records[4].replace(">  <LOGS>  (5) ", ">  LOGS  (5) ")
    records[5] = records[5].replace("\n-0.50\n", "\nn/a\n")
    records[6] = records[6][: records[6].index("M  END")].rsplit("\n", 3)[0] + "\n"
    return "".join(records)


def _record(index: int, name: str, molecule: Synthetic) -> Chem.Mol:
    mol = Chem.Mol(molecule.mol)
    rdDepictor.Compute2DCoords(mol)
    values = {"ID": str(index + 1), "NAME": name, "LOGS": f"{molecule.logs:.2f}",
              "LOGS_classification": solubility_class(round(molecule.logs, 2)),
              "SMILES": Chem.MolToSmiles(mol)}
    if index % 25 == 24:
        values["NOTE"] = f"synthetic record\nassembled from {molecule.fragments} fragments"
    mol.SetProp("_Name", name)
    for tag, value in values.items():
        mol.SetProp(tag, value)
    return mol


def _name(index: int) -> str:
    plain = f"SYN-{index + 1:06d}"
    return ODD_NAMES[index // 37 % len(ODD_NAMES)].format(plain) if index % 37 == 36 else plain


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
