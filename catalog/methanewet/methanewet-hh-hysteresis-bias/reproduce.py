"""Annotator reproduction: late-season half-hourly methane flux despite seasonal hysteresis.

Method (the gold; the prompt leaves the method to the agent): the forecast of
`methanewet_runs.forecast_halfhourly` (`run_halfhourly_forecast`), a process model per site
fitted on the early and mid season: the 45-day growing-season pool carries the substrate supply,
so the model does not read the late season's higher flux at one temperature as a temperature
effect. Its check one test-period length earlier gives the relative volume bias
|sum(sim - obs)| / sum(obs) and the median KGE.

Deterministic: no random draws, single thread.
"""

from __future__ import annotations

from annotator_common import write_answer
from methanewet_annotator import score
from methanewet_runs import run_halfhourly_forecast


def main() -> None:
    """Predict the test period of the query in the current directory; write the artifact."""
    check = run_halfhourly_forecast()
    volume = abs((check["filled"] - check["observed"]).sum()) / check["observed"].sum()
    write_answer(metrics={"relative_bias": volume,
                          "kge_median": score(check, "observed", "filled", "kge", "median")})


if __name__ == "__main__":
    main()
