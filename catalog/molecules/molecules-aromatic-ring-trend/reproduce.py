"""Annotator reproduction: the change in measured log solubility per aromatic ring.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Feature: the aromatic ring count of the matched structure (`rdMolDescriptors.
   CalcNumAromaticRings`, each ring of a fused system counted). Checkpoint `work/features.parquet`.
3. The OLS slope (with an intercept) of log solubility on the count; its sampling uncertainty from
   500 resamples (`numpy.random.default_rng(0)`) in `work/bootstrap.json`. A scope where fewer
   than two counts are held by at least 5 molecules each has no gradient and is discarded.
"""

from __future__ import annotations

from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, slope, with_descriptors

MIN_LEVEL = 5


def main() -> None:
    """Join structures to measurements and fit log solubility on the aromatic ring count."""
    molecules = with_descriptors(aligned_molecules(read_scope()), "aromatic_rings")
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    write_checkpoint("features.parquet", molecules[["aromatic_rings"]])
    table = molecules[["aromatic_rings", "logs_log10_mol_l"]].dropna()
    levels = table["aromatic_rings"].value_counts()
    if (levels >= MIN_LEVEL).sum() < 2:
        raise SystemExit(f"no gradient: aromatic ring counts held {levels.to_dict()}")
    x, y = table["aromatic_rings"].to_numpy(float), table["logs_log10_mol_l"].to_numpy()
    write_answer(round(slope(x, y), 6), bootstrap(len(x), lambda i: slope(x[i], y[i])))


if __name__ == "__main__":
    main()
