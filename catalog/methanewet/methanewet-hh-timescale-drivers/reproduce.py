"""Annotator reproduction: half-hourly methane flux over a season from its diurnal to seasonal drivers.

Method (the gold; the prompt leaves the method to the agent): the forecast of
`methanewet_runs.forecast_halfhourly` (`run_halfhourly_forecast`), a process model per site whose
terms cover each timescale: diurnal harmonics of local time for the sub-daily scale, soil
temperature for the synoptic scale, the growing-season pools for the seasonal scale. Its check
one test-period length earlier gives the pooled r2 of the intervals and the median NSE of the
sites' ISO-week means.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from annotator_common import write_answer
from methanewet_annotator import KEY, score
from methanewet_halfhourly import TIME
from methanewet_runs import run_halfhourly_forecast


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact."""
    check = run_halfhourly_forecast()
    weekly = check.groupby([KEY, check[TIME].dt.isocalendar().week])[["observed", "filled"]].mean()
    write_answer(metrics={"r2_pooled": score(check, "observed", "filled", "r2", "pooled"),
                          "nse_weekly_median": score(weekly.reset_index(), "observed", "filled", "nse", "median")})


if __name__ == "__main__":
    main()
