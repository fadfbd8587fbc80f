"""Annotator reproduction: transfer a pooled half-hourly methane model to sites with a short record.

Method (the gold; the prompt leaves the method to the agent): `methanewet_runs.forecast_halfhourly`
with one shared log-linear response (Q10 temperature response, substrate pools, diurnal
harmonics, water-table limitation) pretrained on every site's short record together, with a
level fine-tuned per site (its mean log flux).

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from methanewet_runs import forecast_halfhourly

SHARED = True  # one response pooled over sites with a per-site level, or a model per site


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact and answer.json."""
    forecast_halfhourly({"rmse_nmol_m2_s": ("rmse", "all"), "nse_median": ("nse", "median")}, SHARED)


if __name__ == "__main__":
    main()
