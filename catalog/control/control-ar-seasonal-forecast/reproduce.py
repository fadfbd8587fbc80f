"""Annotator reproduction: Box-Jenkins forecasts of each series from its own past (months ahead).

Method (the gold; the prompt leaves the method to the agent): `control_series.run_own_past_forecast`
over the test period, the last 25 % of the scope's days: once the AR(p) errors have decayed, a
drifting or seasonal series' forecast is its deterministic part (trend, annual harmonic).
"""

from __future__ import annotations

from control_series import run_own_past_forecast


def main() -> None:
    """Forecast the next months of every series from its own past; write the artifact and answer.json."""
    run_own_past_forecast()


if __name__ == "__main__":
    main()
