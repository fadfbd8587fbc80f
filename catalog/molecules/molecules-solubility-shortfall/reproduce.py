"""Annotator reproduction: the molecule least soluble for its four structural descriptors.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Features of the matched structure: Crippen logP, molecular weight, rotatable bonds
   (`Descriptors.NumRotatableBonds`) and aromatic proportion; the OLS fit (with an intercept) of
   measured log solubility on the four across the scope's molecules and each molecule's residual
   (measured minus fitted). Checkpoint `work/features.parquet`.
3. The answer is the name of the molecule with the most negative residual. A query whose runner-up
   is within 0.05 log units of it is ambiguous and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import ols, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured, single_extreme, with_descriptors

DESCRIPTORS = ["logp", "mol_wt", "rotatable_bonds", "aromatic_proportion"]
MIN_LEAD = 0.05


def main() -> None:
    """Join structures to measurements, fit the four-descriptor model, name the largest shortfall."""
    molecules = with_descriptors(aligned_molecules(read_scope()), "rotatable_bonds")
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    table = measured(molecules, DESCRIPTORS)
    y = table["logs_log10_mol_l"].to_numpy()
    coefficients = ols(y, *(table[c].to_numpy(float) for c in DESCRIPTORS))
    fitted = coefficients[0] + table[DESCRIPTORS].to_numpy(float) @ coefficients[1:]
    residual = pd.Series(y - fitted, index=table.index)
    write_checkpoint("features.parquet", pd.DataFrame({
        "rotatable_bonds": table["rotatable_bonds"].astype(float),
        "aromatic_proportion": table["aromatic_proportion"], "residual": residual}))
    write_answer(str(table.loc[single_extreme(residual, MIN_LEAD, largest=False), "name"]))


if __name__ == "__main__":
    main()
