"""Shared code of the `molecules` annotator scripts: read the structures, join the measurements.

A query stages two things apart (see `data/README.md`): `structures.sdf` (the structures, each
record titled with the molecule's name, no identifier) and `entities.parquet` (per `molecule_id`:
its standard InChIKey and the measured log solubility). Aligning them is the analysis's first
step, done here as the scripts' docstrings state: each structure's standard InChIKey is computed
with RDKit and matched to the table's; the scope's molecules are the table's rows in the scope
block. Descriptors come from the structure: Crippen logP (Wildman and Crippen 1999, RDKit's
`Crippen.MolLogP`), average molecular weight (`Descriptors.MolWt`), heavy atoms, and the aromatic
proportion (aromatic heavy atoms / heavy atoms, as in Delaney's ESOL). More descriptors of the
matched structure (`DESCRIPTORS`: Fsp3, aromatic rings, rotatable bonds, rule-of-five violations, TPSA)
are added by name with `with_descriptors`; the statistics the scripts share (`pearson`, `slope`,
`mean_difference`) raise ValueError where undefined, which the bootstrap skips.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors

DATA = Path("data")
RDLogger.DisableLog("rdApp.*")


def read_structures(path: Path = DATA / "structures.sdf") -> pd.DataFrame:
    """One row per readable SDF record: name, InChIKey and the structure's descriptors."""
    rows = []
    for mol in Chem.SDMolSupplier(str(path)):
        if mol is None:
            continue
        heavy = mol.GetNumHeavyAtoms()
        aromatic = sum(atom.GetIsAromatic() for atom in mol.GetAtoms())
        rows.append({"name": mol.GetProp("_Name"), "inchikey": Chem.MolToInchiKey(mol),
                     "heavy_atoms": heavy, "logp": Crippen.MolLogP(mol),
                     "mol_wt": Descriptors.MolWt(mol),
                     "aromatic_proportion": aromatic / heavy if heavy else np.nan})
    return pd.DataFrame(rows)


def aligned_molecules(scope: dict) -> pd.DataFrame:
    """The scope's molecules with their measured log solubility and structure, indexed by molecule_id.

    A table row whose InChIKey no structure has is left out; a key shared by two structures is an
    error (the join would be ambiguous).
    """
    table = pd.read_parquet(DATA / "entities.parquet")
    table["molecule_id"] = table["molecule_id"].astype(str)
    table = table[table["molecule_id"].isin(scope["entities"])]
    structures = read_structures()
    if structures["inchikey"].duplicated().any():
        raise SystemExit("two structures share an InChIKey: the join is ambiguous")
    joined = table.merge(structures, on="inchikey", how="inner", validate="one_to_one")
    return joined.set_index("molecule_id").sort_index()


def measured(molecules: pd.DataFrame, columns: list[str], minimum: int = 20) -> pd.DataFrame:
    """The molecules with every one of `columns` and a measured log solubility; SystemExit (a
    discarded query) with fewer than `minimum` of them."""
    table = molecules.dropna(subset=[*columns, "logs_log10_mol_l"])
    if len(table) < minimum:
        raise SystemExit(f"only {len(table)} molecules with a structure and a measurement")
    return table


def rule_of_five_violations(mol: Chem.Mol) -> int:
    """How many of Lipinski's four limits the structure exceeds (Lipinski et al. 1997/2001).

    Molecular weight over 500 (`Descriptors.MolWt`), Crippen logP over 5 (`Crippen.MolLogP`),
    more than 5 hydrogen-bond donors (`Descriptors.NumHDonors`) or more than 10 acceptors
    (`Descriptors.NumHAcceptors`).
    """
    return (int(Descriptors.MolWt(mol) > 500) + int(Crippen.MolLogP(mol) > 5)
            + int(Descriptors.NumHDonors(mol) > 5) + int(Descriptors.NumHAcceptors(mol) > 10))


# Descriptors a script may add to the aligned molecules by name (`with_descriptors`).
DESCRIPTORS = {
    "fraction_csp3": rdMolDescriptors.CalcFractionCSP3,  # Lovering et al. 2009's Fsp3
    "aromatic_rings": rdMolDescriptors.CalcNumAromaticRings,  # fused rings counted one by one
    "rotatable_bonds": Descriptors.NumRotatableBonds,
    "ro5_violations": rule_of_five_violations,
    "tpsa": rdMolDescriptors.CalcTPSA,  # topological polar surface area (N and O contributions)
}


def with_descriptors(molecules: pd.DataFrame, *names: str,
                     path: Path = DATA / "structures.sdf") -> pd.DataFrame:
    """The aligned molecules with more descriptors of their matched structure (`DESCRIPTORS`).

    Each readable SDF record's descriptors are computed and carried across by its standard InChIKey,
    the key `aligned_molecules` joined on (so a molecule keeps the structure it was matched to).
    """
    values = {}
    for mol in Chem.SDMolSupplier(str(path)):
        if mol is not None:
            values[Chem.MolToInchiKey(mol)] = {name: DESCRIPTORS[name](mol) for name in names}
    table = pd.DataFrame.from_dict(values, orient="index", columns=list(names))
    return molecules.join(table, on="inchikey")


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of two equally long arrays (ValueError when either is constant)."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ValueError("a constant variable has no correlation")
    return float(np.corrcoef(x, y)[0, 1])


def slope(x: np.ndarray, y: np.ndarray) -> float:
    """OLS slope of y on x with an intercept (ValueError when x is constant)."""
    if np.ptp(x) == 0:
        raise ValueError("a constant regressor has no slope")
    return float(np.polyfit(x, y, 1)[0])


def mean_difference(member: np.ndarray, y: np.ndarray) -> float:
    """Mean of y where `member` is true minus its mean elsewhere (ValueError when a group is empty)."""
    member = np.asarray(member, dtype=bool)
    if member.all() or not member.any():
        raise ValueError("one group is empty")
    return float(y[member].mean() - y[~member].mean())


def require_groups(member: pd.Series, minimum: int, what: tuple[str, str]) -> None:
    """Stop (SystemExit) unless both groups of a boolean split hold at least `minimum` molecules."""
    inside, outside = int(member.sum()), int((~member).sum())
    if inside < minimum or outside < minimum:
        raise SystemExit(f"{inside} {what[0]} and {outside} {what[1]} molecules: a group under {minimum}")


def single_extreme(values: pd.Series, min_lead: float, largest: bool = True) -> str:
    """Index label of the largest (or smallest) value, stopping (SystemExit) on a near tie."""
    ranked = values.sort_values(ascending=not largest)
    lead = abs(float(ranked.iloc[0]) - float(ranked.iloc[1]))
    if lead < min_lead:
        raise SystemExit(f"ambiguous: the two most extreme values {ranked.iloc[0]:.3f} and "
                         f"{ranked.iloc[1]:.3f} are within {min_lead}")
    return str(ranked.index[0])
