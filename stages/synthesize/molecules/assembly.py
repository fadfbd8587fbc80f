"""Seeded assembly of valid organic molecules from fragments, and their ESOL-like solubility.

A molecule starts from a core (a ring or an alkyl chain) and grows by attaching fragments (rings,
chains and substituents) by a single bond from the fragment's first atom to a carbon of the growing
molecule that still carries a hydrogen. Only carbon atoms take new bonds, so no peroxide-like
heteroatom-heteroatom links appear, and every intermediate is sanitized by RDKit: every molecule is
valid by construction.

Solubility follows Delaney's ESOL equation (Delaney 2004, doi:10.1021/ci034243x):
``logS = 0.16 - 0.63 cLogP - 0.0062 MW + 0.066 RB - 0.74 AP`` with Crippen cLogP, molecular weight
MW (g/mol), rotatable bonds RB and aromatic proportion AP (aromatic heavy atoms / heavy atoms),
plus Gaussian noise (a measurement error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rdkit import Chem
from rdkit.Chem import Crippen, Descriptors

RINGS = ("c1ccccc1", "c1ccccc1", "c1ccncc1", "c1ccsc1", "c1ccoc1", "c1cncnc1", "C1CCCCC1",
         "C1CCCC1", "C1CCOCC1", "C1CCNCC1", "C1CCN(C)CC1", "c1ccc2ccccc2c1", "c1ccc2[nH]ccc2c1")
CHAINS = ("C", "C", "CC", "CCC", "CC(C)C", "CCCC", "CCCCC", "CC(C)(C)C", "C=C", "CCOC")
SUBSTITUENTS = ("O", "N", "F", "Cl", "Cl", "Br", "C(=O)O", "C(=O)N", "C#N", "OC", "[N+](=O)[O-]",
                "C(F)(F)F", "S(=O)(=O)N", "C(C)=O", "NC(C)=O", "OC(C)=O", "C(=O)OC", "N(C)C")
KINDS = {"ring": RINGS, "chain": CHAINS, "substituent": SUBSTITUENTS}
GROW_WEIGHTS = {"ring": 0.22, "chain": 0.28, "substituent": 0.50}
MAX_HEAVY_ATOMS = 40
ESOL = {"intercept": 0.16, "clogp": -0.63, "mw": -0.0062, "rb": 0.066, "ap": -0.74}
_FRAGMENTS = {smiles: Chem.MolFromSmiles(smiles) for group in KINDS.values() for smiles in group}


@dataclass(frozen=True)
class Synthetic:
    """One assembled molecule, its ESOL descriptors and its noisy solubility."""

    mol: Chem.Mol
    fragments: int
    clogp: float
    mw_g_mol: float
    rotatable_bonds: int
    aromatic_proportion: float
    logs: float


def assemble(rng: np.random.Generator) -> tuple[Chem.Mol, int]:
    """A random valid molecule with 2-7 fragments (and how many were used)."""
    core_kind = "ring" if rng.random() < 0.75 else "chain"
    mol = Chem.Mol(_FRAGMENTS[_pick(rng, KINDS[core_kind])])
    target, used = int(rng.integers(2, 8)), 1
    kinds, weights = list(GROW_WEIGHTS), np.array(list(GROW_WEIGHTS.values()))
    while used < target:
        kind = kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]
        fragment = _FRAGMENTS[_pick(rng, KINDS[kind])]
        sites = [a.GetIdx() for a in mol.GetAtoms() if a.GetAtomicNum() == 6 and a.GetTotalNumHs() > 0]
        if not sites or mol.GetNumHeavyAtoms() + fragment.GetNumHeavyAtoms() > MAX_HEAVY_ATOMS:
            break
        mol = _attach(mol, int(sites[int(rng.integers(len(sites)))]), fragment)
        used += 1
    return mol, used


def synthesize(rng: np.random.Generator, noise_sd: float) -> Synthetic:
    """Assemble a molecule and draw its solubility from the ESOL relation plus noise."""
    mol, fragments = assemble(rng)
    heavy = mol.GetNumHeavyAtoms()
    aromatic = sum(atom.GetIsAromatic() for atom in mol.GetAtoms()) / heavy
    clogp, mw = Crippen.MolLogP(mol), Descriptors.MolWt(mol)
    rb = Descriptors.NumRotatableBonds(mol)
    logs = (ESOL["intercept"] + ESOL["clogp"] * clogp + ESOL["mw"] * mw + ESOL["rb"] * rb
            + ESOL["ap"] * aromatic + noise_sd * rng.standard_normal())
    return Synthetic(mol, fragments, clogp, mw, rb, aromatic, logs)


def solubility_class(logs: float) -> str:
    """The class as in the RDKit solubility set: low <= -3 < medium <= -1 < high."""
    if logs <= -3:
        return "(A) low"
    return "(B) medium" if logs <= -1 else "(C) high"


def _pick(rng: np.random.Generator, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def _attach(mol: Chem.Mol, site: int, fragment: Chem.Mol) -> Chem.Mol:
    """Bond atom 0 of `fragment` to atom `site` of `mol` and sanitize the result."""
    combined = Chem.RWMol(Chem.CombineMols(mol, fragment))
    combined.AddBond(site, mol.GetNumAtoms(), Chem.BondType.SINGLE)
    grown = combined.GetMol()
    Chem.SanitizeMol(grown)
    return grown
