"""Annotator reproduction: log solubility of mostly aromatic molecules against the others.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Feature: aromatic proportion = aromatic heavy atoms / heavy atoms (RDKit's aromaticity).
   Checkpoint `work/features.parquet`.
3. Mean log solubility of the molecules above 0.5 minus that of the rest; its sampling uncertainty
   from 500 resamples (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A scope with fewer
   than 5 molecules in a group has no comparison and is discarded.
"""

from __future__ import annotations

import numpy as np
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules

THRESHOLD = 0.5
MIN_GROUP = 5


def difference(proportion: np.ndarray, logs: np.ndarray) -> float:
    """Mean log solubility above the threshold minus that at or below it."""
    aromatic = proportion > THRESHOLD
    if aromatic.all() or not aromatic.any():
        raise ValueError("one group is empty")
    return float(logs[aromatic].mean() - logs[~aromatic].mean())


def main() -> None:
    """Join structures to measurements and compare the two groups."""
    molecules = aligned_molecules(read_scope())
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    write_checkpoint("features.parquet", molecules[["aromatic_proportion"]])
    table = molecules[["aromatic_proportion", "logs_log10_mol_l"]].dropna()
    groups = (table["aromatic_proportion"] > THRESHOLD).value_counts()
    if groups.get(True, 0) < MIN_GROUP or groups.get(False, 0) < MIN_GROUP:
        raise SystemExit(f"groups of {groups.get(True, 0)} and {groups.get(False, 0)} molecules: too small")
    p, y = table["aromatic_proportion"].to_numpy(), table["logs_log10_mol_l"].to_numpy()
    write_answer(round(difference(p, y), 6), bootstrap(len(p), lambda i: difference(p[i], y[i])))


if __name__ == "__main__":
    main()
