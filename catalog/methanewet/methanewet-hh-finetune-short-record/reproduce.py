"""Annotator reproduction: transfer a pooled half-hourly methane model to sites with a short record.

Method (the gold; the prompt leaves the method to the agent):
1. Read the scope and artifact blocks; the owed rows are every interval from the test day on.
2. Driver features per interval (`driver_features`): shallow soil temperature, its 1-, 7- and
   45-day growing-season pools (the substrate supply that lags temperature: late-season fluxes
   exceed early-season ones at one temperature), the water table below / above the surface, the
   local time of day (plant transport peaks in the early afternoon), the season and the
   gap-filled meteorology.
3. `forecast`: one log-linear response (Q10 temperature response, substrate pools, diurnal
   harmonics, water-table limitation) pretrained on every site's short record together, with a
   level fine-tuned per site (its mean log flux),
   plus the anomaly of the last observed day (the model's mean departure from the fluxes),
   decaying with a two-day time constant into the test period; back-transformed to the mean flux.
4. Report the metrics of the same forecast one test-period length earlier on observed data.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from methanewet_annotator import rmse, score, write_answer
from methanewet_runs import run_halfhourly_forecast

SHARED = True  # one response pooled over sites with a per-site level, or a model per site


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact."""
    check = run_halfhourly_forecast(shared=SHARED)
    write_answer({"rmse_nmol_m2_s": rmse(check["observed"], check["filled"]),
                  "nse_median": score(check, "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
