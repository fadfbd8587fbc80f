"""Annotator reproduction: correlation of molecular weight and measured log solubility.

Method (the gold):
1. Align (see `molecules_annotator`): each structure's standard InChIKey, computed with RDKit, is
   matched to the measurements' InChIKey. Checkpoint `work/aligned.parquet` (heavy atoms of the
   matched structure).
2. Feature: the structure's average molecular weight (`Descriptors.MolWt`). Checkpoint
   `work/features.parquet`.
3. Pearson r with the measured log solubility across the scope's molecules; its sampling
   uncertainty from 500 resamples (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured


def main() -> None:
    """Join structures to measurements, correlate molecular weight with log solubility."""
    molecules = aligned_molecules(read_scope())
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    write_checkpoint("features.parquet", molecules[["mol_wt"]])
    table = measured(molecules, ["mol_wt"])
    x, y = table["mol_wt"].to_numpy(), table["logs_log10_mol_l"].to_numpy()
    r = float(np.corrcoef(x, y)[0, 1])
    write_answer(round(r, 6), bootstrap(len(x), lambda i: np.corrcoef(x[i], y[i])[0, 1]))


if __name__ == "__main__":
    main()
