"""Annotator reproduction: correlation of carbon saturation (Fsp3) and measured log solubility.

Method (the gold):
1. Align (see `molecules_annotator`): each structure's standard InChIKey, computed with RDKit, is
   matched to the measurements' InChIKey. Checkpoint `work/aligned.parquet` (heavy atoms of the
   matched structure).
2. Feature: the fraction of sp3 carbons of the matched structure
   (`rdMolDescriptors.CalcFractionCSP3`). Checkpoint `work/features.parquet`.
3. Pearson r with the measured log solubility across the scope's molecules; its sampling
   uncertainty from 500 resamples (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A scope
   whose fractions do not vary has no correlation and is discarded.
"""

from __future__ import annotations

from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, measured, pearson, with_descriptors


def main() -> None:
    """Join structures to measurements, correlate the sp3 fraction with log solubility."""
    molecules = with_descriptors(aligned_molecules(read_scope()), "fraction_csp3")
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    write_checkpoint("features.parquet", molecules[["fraction_csp3"]])
    table = measured(molecules, ["fraction_csp3"])
    x, y = table["fraction_csp3"].to_numpy(), table["logs_log10_mol_l"].to_numpy()
    try:
        r = pearson(x, y)
    except ValueError as error:
        raise SystemExit(f"no correlation: {error}") from error
    write_answer(round(r, 6), bootstrap(len(x), lambda i: pearson(x[i], y[i])))


if __name__ == "__main__":
    main()
