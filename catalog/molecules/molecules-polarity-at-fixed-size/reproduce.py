"""Annotator reproduction: the change in log solubility with polar surface area at fixed size.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Features of the matched structure: the topological polar surface area (`rdMolDescriptors.
   CalcTPSA`, nitrogen and oxygen contributions, RDKit's default) and the average molecular weight
   (`Descriptors.MolWt`). Checkpoint `work/features.parquet`.
3. The OLS fit (with an intercept) of measured log solubility on both; the answer is the polar
   surface area coefficient per 10 A^2. Its sampling uncertainty from 500 resamples
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from annotator_common import bootstrap, ols, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured, with_descriptors

PER_AREA = 10.0  # A^2: the coefficient is reported per 10 A^2 of polar surface area


def coefficient(tpsa: np.ndarray, weight: np.ndarray, logs: np.ndarray) -> float:
    """Polar surface area coefficient (per 10 A^2) of log solubility on it and molecular weight."""
    if np.ptp(tpsa) == 0 or np.ptp(weight) == 0:
        raise ValueError("a constant regressor has no coefficient")
    return float(ols(logs, tpsa, weight)[1] * PER_AREA)


def main() -> None:
    """Join structures to measurements and fit log solubility on polar surface area and weight."""
    molecules = with_descriptors(aligned_molecules(read_scope()), "tpsa")
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    table = measured(molecules, ["tpsa", "mol_wt"])
    write_checkpoint("features.parquet", pd.DataFrame({"tpsa": table["tpsa"], "mol_wt": table["mol_wt"]}))
    t, w = table["tpsa"].to_numpy(float), table["mol_wt"].to_numpy()
    y = table["logs_log10_mol_l"].to_numpy()
    write_answer(round(coefficient(t, w, y), 6), bootstrap(len(y), lambda i: coefficient(t[i], w[i], y[i])))


if __name__ == "__main__":
    main()
