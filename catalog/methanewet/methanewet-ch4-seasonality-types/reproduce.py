"""Annotator reproduction: group sites by methane seasonality.

Method (the gold; the prompt leaves the method to the agent):
1. Per site, the prompt's seasonality features of the measured daily flux, z-scored across sites.
2. k-means (20 seeded starts) for k = 2..6; the partition with the highest mean silhouette.
"""

from __future__ import annotations

from methanewet_annotator import TARGET
from methanewet_runs import run_partition

FEATURES = ['cv', 'lag1', 'seasonal_amplitude', 'q10']

if __name__ == "__main__":
    run_partition(TARGET, FEATURES)
