"""Annotator reproduction: the daily water table from precipitation and evaporation.

Method (the gold; the prompt leaves the method to the agent):
1. Water balance states from forcing: running means of precipitation and of latent heat flux
   (evapotranspiration) over 7, 30 and 90 days, and their difference.
2. Per site, a linear regression of the water table on those states; gradient-boosted trees pooled
   over the sites learn its residuals.
3. Report the metrics estimated on the last 30 % of the training period.
"""

from __future__ import annotations

from methanewet_models import Setup, predict
from methanewet_runs import run_holdout

DRIVERS = ["p_f_mm", "ta_f_c", "le_f_w_m2", "vpd_f_hpa", "sw_in_f_w_m2"]
METRICS = {"nse_median": ("nse", "median"), "rmse_m": ("rmse", "pooled")}
SPANS = (7, 30, 90)


def balance(frame, setup, train):
    """Water-table predictions from running means of rain and evapotranspiration."""
    frame = frame.copy()
    names = []
    for span in SPANS:
        for column in ("p_f_mm", "le_f_w_m2"):
            name = f"{column}_{span}"
            frame[name] = frame.groupby("site_id")[column].transform(
                lambda s, span=span: s.fillna(0.0).ewm(span=span).mean())
            names.append(name)
    return predict(frame, Setup(setup.target, [*setup.drivers, *names], log=False, process=names), train)


if __name__ == "__main__":
    run_holdout(Setup(target="wtd_m", drivers=DRIVERS, log=False), METRICS, method=balance)
