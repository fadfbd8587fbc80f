"""Annotator reproduction: how far measured solubility lies below the liquid form of the GSE.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Features: the Crippen logP of the matched structure (`Crippen.MolLogP`) and each molecule's gap,
   measured log solubility minus the general solubility equation without its melting-point term
   (log S = 0.5 - logP, the equation for a liquid solute). Checkpoint `work/features.parquet`.
3. The mean gap across the scope's molecules; its sampling uncertainty from 500 resamples
   (`numpy.random.default_rng(0)`) in `work/bootstrap.json`.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured

LIQUID_INTERCEPT = 0.5  # log S = 0.5 - 0.01 (MP - 25) - logP, with the melting-point term left out


def main() -> None:
    """Join structures to measurements and average the gap to the liquid-solute equation."""
    molecules = aligned_molecules(read_scope())
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    table = measured(molecules, ["logp"])
    gap = table["logs_log10_mol_l"] - (LIQUID_INTERCEPT - table["logp"])
    write_checkpoint("features.parquet", pd.DataFrame({"logp": table["logp"], "gse_gap": gap}))
    values = gap.to_numpy()
    write_answer(round(float(values.mean()), 6), bootstrap(len(values), lambda i: values[i].mean()))


if __name__ == "__main__":
    main()
