"""Assemble the `daily` rows of some basins: forcing and discharge side by side on (gauge, date)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from stages.sources.camels_us.check import Series, repeat_gauges

FT3_TO_M3 = 0.0283168


def discharge(cfs: np.ndarray, flags: pa.Array, areas_m2: np.ndarray) -> dict[str, pa.Array]:
    """`qobs_cfs`, `qobs_mm_d` and `qobs_flag`; missing days (flag `M` or negative discharge) are null.

    mm/d uses the basin area from the forcing header, as neuralhydrology does.
    """
    missing = (cfs < 0) | pc.equal(flags, "M").to_numpy(zero_copy_only=False)
    mm_d = cfs * FT3_TO_M3 * 86400 / areas_m2 * 1000
    return {"qobs_cfs": pa.array(cfs, pa.float64(), mask=missing),
            "qobs_mm_d": pa.array(mm_d, pa.float64(), mask=missing), "qobs_flag": flags.cast(pa.string())}


def daily_table(gauges: list[str], areas_m2: list[float], forcing: Series, flow: Series) -> pa.Table:
    """Every day of either record of each basin; a day only one record has is null in the other's columns."""
    cfs = flow.columns["qobs_cfs"].to_numpy()
    flow_columns = discharge(cfs, flow.columns["qobs_flag"], np.repeat(areas_m2, flow.counts))
    if np.array_equal(forcing.counts, flow.counts) and np.array_equal(forcing.days, flow.days):
        counts, days, columns = forcing.counts, forcing.days, forcing.columns | flow_columns
    else:
        keys = [("basin", "ascending"), ("day", "ascending")]
        joined = _keyed(forcing, forcing.columns).join(_keyed(flow, flow_columns), [name for name, _ in keys],
                                                        join_type="full outer").sort_by(keys).combine_chunks()
        counts = np.bincount(joined.column("basin").to_numpy(), minlength=len(gauges))
        days = joined.column("day").to_numpy()
        columns = {name: joined.column(name) for name in (*forcing.columns, *flow_columns)}
    return pa.table({"gauge_id": repeat_gauges(gauges, counts), "date": pa.array(days, pa.int32()).cast(pa.date32()),
                     **columns}).combine_chunks()


def concatenated(parts: list[Series]) -> Series:
    """The series of several groups of basins (at least one), one group after the other."""
    return Series(np.concatenate([p.counts for p in parts]), np.concatenate([p.days for p in parts]),
                  {name: pa.concat_arrays([p.columns[name] for p in parts]) for name in parts[0].columns})


def _keyed(series: Series, columns: dict[str, pa.Array]) -> pa.Table:
    basin = np.repeat(np.arange(len(series.counts), dtype=np.int32), series.counts)
    return pa.table({"basin": basin, "day": series.days, **columns})
