"""Annotator reproduction: the scope's most rugged grid cell.

Method (the gold):
1. Align (see `gridcells_annotator`): the relief pixels whose centres fall in each cell's bounds.
   Checkpoint `work/aligned.parquet`.
2. Ruggedness: the population standard deviation of the cell's valid relief pixels (cells with fewer
   than 10 valid pixels are left out). Checkpoint `work/features.parquet`.
3. The answer is the centre of the most rugged cell. A query whose runner-up is within 5 % of it is
   ambiguous (a pixel-assignment detail could swap them) and is discarded.
"""

from __future__ import annotations

import pandas as pd
from annotator_common import read_scope, write_answer, write_checkpoint
from gridcells_annotator import read_cells, zonal

MIN_PIXELS = 10
MIN_LEAD = 0.05


def main() -> None:
    """Align, compute ruggedness, write the most rugged cell's centre and the checkpoints."""
    cells = read_cells(read_scope())
    relief = zonal(cells, "relief")
    write_checkpoint("aligned.parquet", pd.DataFrame({"n_pixels": relief["n_pixels"]}))
    write_checkpoint("features.parquet", pd.DataFrame({"elevation_sd_m": relief["sd"]}))
    rugged = relief.loc[relief["n_valid"] >= MIN_PIXELS, "sd"].sort_values(ascending=False)
    if len(rugged) < 2:
        raise SystemExit(f"only {len(rugged)} cells with {MIN_PIXELS} valid relief pixels")
    if rugged.iloc[1] >= (1 - MIN_LEAD) * rugged.iloc[0]:
        raise SystemExit(f"ambiguous: the runner-up's sd {rugged.iloc[1]:.1f} m is within "
                         f"{MIN_LEAD:.0%} of the top {rugged.iloc[0]:.1f} m")
    top = cells.loc[rugged.index[0]]
    write_answer([round(float(top["lat_deg"]), 6), round(float(top["lon_deg"]), 6)])


if __name__ == "__main__":
    main()
