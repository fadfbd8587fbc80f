"""Annotator reproduction: predict withheld half-hourly methane flux with gap-filled drivers as inputs.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.forecast_halfhourly`
with a process model per site, fitted on every observed interval before the test period: the
gap-filled drivers make every interval usable.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from methanewet_runs import forecast_halfhourly

SHARED = False  # one response pooled over sites with a per-site level, or a model per site


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact and answer.json."""
    forecast_halfhourly({"rmse_nmol_m2_s": ("rmse", "all"), "kge_median": ("kge", "median")}, SHARED)


if __name__ == "__main__":
    main()
