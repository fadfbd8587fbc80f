"""Annotator reproduction: Box-Jenkins forecasts of each series from its own past.

Method (the gold; the prompt leaves the method to the agent): `control_series.run_own_past_forecast`
over the test period, the last 2 % of the scope's days (a few weeks ahead): the AR(p) errors carry
a persistent series' last departures into the first days; a white-noise series gets its mean.
"""

from __future__ import annotations

from control_series import run_own_past_forecast


def main() -> None:
    """Forecast the next weeks of every series from its own past; write the artifact and answer.json."""
    run_own_past_forecast()


if __name__ == "__main__":
    main()
