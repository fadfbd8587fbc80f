"""A multimodal agent that makes one chosen mistake (argv[1]), to test error attribution.

Solves `gridcells-ndvi-precipitation` the way the task says, writing both checkpoints, except:
- `right`: no mistake;
- `misaligned`: takes the grid cell one row off (a lat axis read upside down) - an alignment error;
- `nodata`: averages NDVI with the nodata pixels as values - a modeling error on a right alignment;
- `spearman`: right intermediates, Spearman's rho instead of Pearson's r - a reasoning error;
- `silent`: the `spearman` answer without checkpoints - nothing to attribute it with.
Needs only numpy, pandas, netCDF4, rasterio and scipy, as any analyst's script would.
"""

import json
import sys
from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import rasterio
from rasterio.warp import transform
from scipy import stats

MISTAKE = sys.argv[1]
data, work = Path("data"), Path("work")
scope = json.loads(Path("prompt.md").read_text().split("## Scope")[1].split("```json\n")[1].split("\n```")[0])
cells = pd.read_parquet(data / "entities.parquet")
cells = cells[cells["cell_id"].astype(str).isin(scope["entities"])].set_index("cell_id").sort_index()

with netCDF4.Dataset(data / "grid.nc") as grid:
    lat, lon = np.asarray(grid["lat"][:]), np.asarray(grid["lon"][:])
    precip = np.ma.filled(grid["precip"][:].astype(float), np.nan)
rows = [int(np.argmin(np.abs(lat - v))) for v in cells["lat_deg"]]
if MISTAKE == "misaligned":
    rows = [min(r + 1, len(lat) - 1) if r + 1 < len(lat) else r - 1 for r in rows]
cols = [int(np.argmin(np.abs(lon - v))) for v in cells["lon_deg"]]
wet = np.nanmean(precip[:, rows, cols], axis=0)

with rasterio.open(data / "imagery" / "ndvi_20200715.tif") as image:
    values = image.read(1).astype(float)
    if MISTAKE != "nodata":
        values[values == image.nodata] = np.nan
    r, c = np.indices(values.shape)
    xs, ys = image.transform * (c.ravel() + 0.5, r.ravel() + 0.5)
    lons, lats = (np.asarray(v) for v in transform(image.crs, "EPSG:4326", xs, ys))
flat = values.ravel()
count, green = [], []
for _, box in cells.iterrows():
    inside = ((lons >= box["lon_west_deg"]) & (lons < box["lon_east_deg"])
              & (lats >= box["lat_south_deg"]) & (lats < box["lat_north_deg"]))
    count.append(int(inside.sum()))
    green.append(float(np.nanmean(flat[inside])) if inside.any() else np.nan)

work.mkdir(exist_ok=True)
if MISTAKE != "silent":
    pd.DataFrame({"cell_id": cells.index, "n_pixels": count, "precip_mm_d": wet}).to_parquet(work / "aligned.parquet")
    pd.DataFrame({"cell_id": cells.index, "ndvi": green}).to_parquet(work / "features.parquet")
table = pd.DataFrame({"g": green, "w": wet}).dropna()
rank = MISTAKE in ("spearman", "silent")
value = (stats.spearmanr if rank else stats.pearsonr)(table["g"], table["w"])[0]
(work / "answer.json").write_text(json.dumps({"answer": round(float(value), 6)}))
