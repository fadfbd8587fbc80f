"""Annotator reproduction: Box-Jenkins forecasts of each series from its own past.

Method (the gold; the prompt leaves the method to the agent):
1. Per series, over the public days: deterministic terms (constant; linear trend; annual harmonic)
   plus AR(p) errors, p = 0..3, terms and p chosen jointly by BIC (`control_series.fit_series`);
   a white-noise series gets its mean.
2. Forecast the test days: the deterministic part plus the AR recursion from the last residuals.
3. Estimate of the metrics: the same on the public record, forecasting its last test-length days
   from the days before them.
"""

from __future__ import annotations

import pandas as pd
from control_annotator import read_query, write_outputs
from control_series import forecast_own_past


def main() -> None:
    """Forecast every series' test days from its own past; write the artifact and answer.json."""
    scope, artifact, series, _ = read_query()
    first = pd.Timestamp(artifact["rows"]["from"])
    frame, estimate = forecast_own_past(series, scope["entity_key"], first, "y_forecast")
    write_outputs(frame, artifact, estimate)


if __name__ == "__main__":
    main()
