"""Annotator reproduction: group sites into emission regimes.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, the prompt's emission features of the measured daily flux, z-scored across sites.
2. k-means (20 seeded starts) for k = 2..6; the partition with the highest mean silhouette.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_runs import run_partition

FEATURES = ['mean', 'std', 'q10', 'q90', 'lag1']

if __name__ == "__main__":
    run_partition(TARGET, FEATURES)
