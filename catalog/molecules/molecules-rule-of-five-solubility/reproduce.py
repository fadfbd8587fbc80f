"""Annotator reproduction: log solubility of rule-of-five violators against the other molecules.

Method (the gold):
1. Align (see `molecules_annotator`): structures matched to measurements by standard InChIKey.
   Checkpoint `work/aligned.parquet`.
2. Feature: how many of the four limits (molecular weight > 500, Crippen logP > 5, donors > 5,
   acceptors > 10; `molecules_annotator.rule_of_five_violations`) the matched structure exceeds.
   Checkpoint `work/features.parquet`.
3. Mean log solubility of the molecules with at least one violation minus that of the rest; its
   sampling uncertainty from 500 resamples (`numpy.random.default_rng(0)`) in
   `work/bootstrap.json`. A scope with fewer than 5 molecules in a group is discarded.
"""

from __future__ import annotations

from annotator_common import bootstrap, read_scope, write_answer, write_checkpoint
from molecules_annotator import aligned_molecules, mean_difference, require_groups, with_descriptors

MIN_GROUP = 5


def main() -> None:
    """Join structures to measurements and compare violators with the rest."""
    molecules = with_descriptors(aligned_molecules(read_scope()), "ro5_violations")
    molecules = molecules.rename(columns={"ro5_violations": "violations"})
    write_checkpoint("aligned.parquet", molecules[["heavy_atoms"]])
    write_checkpoint("features.parquet", molecules[["violations"]])
    table = molecules[["violations", "logs_log10_mol_l"]].dropna()
    violating = table["violations"] > 0
    require_groups(violating, MIN_GROUP, ("violating", "compliant"))
    member, y = violating.to_numpy(), table["logs_log10_mol_l"].to_numpy()
    write_answer(round(mean_difference(member, y), 6), bootstrap(len(y), lambda i: mean_difference(member[i], y[i])))


if __name__ == "__main__":
    main()
