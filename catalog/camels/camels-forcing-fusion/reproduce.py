"""Annotator reproduction: streamflow simulation from fused forcing (own + the region's basins).

Method (the gold; the prompt leaves the method to the agent):
1. Read the query. Second forcing estimate of every basin-day: the mean precipitation and
   temperatures of the other basins of the same HUC-02 region on that day (all other basins of
   the scope where the region has no other), rescaled to the basin's own long-term means.
2. Fused forcing: the mean of the basin's own and the second estimate; forcing-only features
   (`camels_annotator.basin_features`) of the own forcing plus the water-input and soil-bucket
   series of the fused forcing.
3. A gradient-boosted ensemble per basin on both feature sets, fitted before the test period.
4. Estimates: the same model fitted on the first 80 % of the training days, scored on the rest.

Deterministic: fixed `random_state`, no early stopping, single thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import write_answer
from camels_annotator import FORCING
from camels_models import featurize, local, median_of, others_mean, read_entities, read_query

FUSED = ("prcp_mm_d", "tmax_c", "tmin_c")
FUSED_FEATURES = ["prcp_mm_d", "liquid", "melt", "snowpack", "liquid_ewm_3", "liquid_ewm_15",
                  "liquid_ewm_60", "runoff_50_ewm_10", "runoff_150_ewm_10", "runoff_400_ewm_60"]


def fused_forcing(frame: pd.DataFrame, key: str, regions: pd.Series) -> pd.DataFrame:
    """The basin's forcing averaged with the rescaled mean of its region's other basins."""
    fused = frame.copy()
    for column in FUSED:
        other = others_mean(frame, key, column, regions)
        other = np.where(np.isnan(other), others_mean(frame, key, column), other)
        other = pd.Series(other, index=frame.index)
        own_mean = frame.groupby(key)[column].transform("mean")
        other_mean = other.groupby(frame[key]).transform("mean")
        if column == "prcp_mm_d":
            other = other * own_mean / other_mean.where(other_mean > 0, 1.0)
        else:
            other = other - other_mean + own_mean
        fused[column] = (frame[column] + other.fillna(frame[column])) / 2
    return fused


def main() -> None:
    """Simulate the test period from own and fused forcing; write the artifact and answer.json."""
    q = read_query(FORCING)
    regions = read_entities(Path("data"), q.scope)["huc_02"].astype(str)
    own = featurize(q.frame, q.key)
    fused = featurize(fused_forcing(q.frame, q.key, regions), q.key)[FUSED_FEATURES].add_prefix("fused_")
    simulate = local(pd.concat([own, fused], axis=1), q.obs, q.basins, max_iter=60)
    check = q.validate(simulate)
    q.write_rows(q.test, {"qsim_mm_d": simulate(q.train, q.test)})
    write_answer(metrics={"median_nse": median_of(check, "nse"), "median_kge": median_of(check, "kge")})


if __name__ == "__main__":
    main()
