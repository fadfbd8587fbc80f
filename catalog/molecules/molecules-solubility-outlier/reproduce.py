"""Annotator reproduction: the molecule most soluble for its lipophilicity.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Features: Crippen logP; the OLS line of measured log solubility on logP across the scope's
   molecules and each molecule's residual (measured minus line). Checkpoint `work/features.parquet`.
3. The answer is the name of the molecule with the largest residual. A query whose runner-up is
   within 0.05 log units of it is ambiguous and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import ols, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured

MIN_LEAD = 0.05


def main() -> None:
    """Join structures to measurements, fit the line, name the largest positive residual."""
    molecules = aligned_molecules(read_scope())
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    table = measured(molecules, ["logp"])
    intercept, slope = ols(table["logs_log10_mol_l"].to_numpy(), table["logp"].to_numpy())
    residual = table["logs_log10_mol_l"] - (intercept + slope * table["logp"])
    write_checkpoint("features.parquet", pd.DataFrame({"logp": table["logp"], "residual": residual}))
    ranked = residual.sort_values(ascending=False)
    if ranked.iloc[0] - ranked.iloc[1] < MIN_LEAD:
        raise SystemExit(f"ambiguous: the two largest residuals {ranked.iloc[0]:.3f} and "
                         f"{ranked.iloc[1]:.3f} are within {MIN_LEAD}")
    write_answer(str(table.loc[ranked.index[0], "name"]))


if __name__ == "__main__":
    main()
