"""Annotator reproduction: sensitivity of the runoff ratio to the aridity index.

Method (the gold):
1. Read the scope block of `prompt.md` and keep only its basins and dates.
2. Runoff ratio of each basin = mean observed streamflow / mean precipitation, both over the
   scope's days on which streamflow was observed (so gaps do not bias the ratio).
3. Slope of the ordinary least-squares line of that runoff ratio on the staged aridity index
   (PET / P, Addor et al. 2017) across the scope's basins. Basins without observed streamflow or
   without an aridity value are left out.
4. Sampling uncertainty: the same slope on 500 resamples of the basins (with replacement,
   `numpy.random.default_rng(0)`; resamples with a single aridity value are skipped), written to
   `work/bootstrap.json`. The build sets the query's tolerance from their spread, or discards the
   query as unstable.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from annotator_common import read_scope, write_answer
from camels_annotator import read_timeseries

BOOTSTRAP = 500


def main() -> None:
    """Compute the slope and write work/answer.json."""
    scope = read_scope()
    key = scope["entity_key"]
    frame = read_timeseries(Path("data"), scope, ["prcp_mm_d", "qobs_mm_d"])
    observed = frame[frame["qobs_mm_d"].notna() & frame["prcp_mm_d"].notna()]
    means = observed.groupby(key, sort=True)[["qobs_mm_d", "prcp_mm_d"]].mean()
    means = means[means["prcp_mm_d"] > 0]
    runoff_ratio = (means["qobs_mm_d"] / means["prcp_mm_d"]).rename("runoff_ratio")
    entities = pd.read_parquet(Path("data") / "entities.parquet", columns=[key, "aridity"])
    entities[key] = entities[key].astype(str)
    table = entities.set_index(key).join(runoff_ratio, how="inner").dropna()
    table = table[table.index.isin(scope["entities"])]
    if len(table) < 3:
        raise SystemExit(f"only {len(table)} basins with aridity and observed streamflow")
    if table["aridity"].nunique() < 2:
        raise SystemExit("slope undefined: every basin has the same aridity")
    x, y = table["aridity"].to_numpy(), table["runoff_ratio"].to_numpy()
    slope = np.polyfit(x, y, deg=1)[0]
    rng = np.random.default_rng(0)
    replicates = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, len(x), len(x))
        if np.unique(x[pick]).size > 1:
            replicates.append(float(np.polyfit(x[pick], y[pick], deg=1)[0]))
    write_answer(round(float(slope), 6), replicates)


if __name__ == "__main__":
    main()
