"""The standard reference models of each task category, as one standalone package.

The harness imports it at build time to grade each query's reference models on the scorer side
(`stages.scoring.query.references`); the reference agents (`reference.py`) run the same code in the
sandbox, so a reference agent scores what the build recorded for its model. Standalone: numpy,
pandas, pyarrow and the workspace only (the scripts folder holding it is mounted at /agent, where
`reference.py` imports it as `reference_models`; its modules import each other relatively, so the
same files work under both names). `inputs` reads the prompt's blocks and the scoped tables and
says which rows are owed; `series` holds the per-entity time-series models, `entities` the models
across entities; `hand_in` and the `MODELS` registry are here.

The artifact block's `rows` say which table and time column hold the target (`table`, `time`;
`timeseries` and `date` when absent). Years (`harvest_year`, `year`) count as 1 January.

Models (each returns the artifact's rows, every value column filled with the model's prediction):
- `climatology`: per entity, the mean of the target on each day of year over the steps where it is
  public, smoothed with a 31-day circular window (annual tables: the entity's mean); an entity
  with no public value gets the pooled climatology.
- `pooled_climatology`: the same seasonal mean over every public entity together.
- `linear_forcing`: per entity, ordinary least squares of the target on the same row's other
  numeric columns (except snow water equivalent); pooled over entities for one with no history.
- `interpolate`: per entity, linear interpolation of the target in time across its nulls (ends held).
- `persistence`: per entity, the last public value before each owed step (the first after it at
  the start of the series).
- `linear_trend`: per entity, least squares of the target on time.
- `nearest_entity`: the target of the nearest entity with public values (latitude/longitude of the
  entities table) at the same step, its mean where it has none.
- `mds`: marginal distribution sampling (Reichstein et al. 2005), the eddy-covariance gap filler:
  the entity's mean target at the same time of day within 7 days of the owed step (14, then 28
  when none), else its mean at that time of day, else its mean.
- `region_partition`: labels = the entity's region (the first of `REGIONS` the entities table has
  with more than one value in the scope; `entities.REGIONS`).
- `mean_flow_split`: two clusters, entities at or below / above the median of the target's mean.
"""

from __future__ import annotations

import json
from pathlib import Path

from .entities import mean_flow_split, nearest_entity, region_partition
from .inputs import instants, load_scoped, load_tables, read_block, required_rows
from .series import climatology, interpolate, linear_forcing, linear_trend, mds, persistence, pooled_climatology

__all__ = ["MODELS", "PARTITIONS", "VALUE_ROWS", "climatology", "hand_in", "instants", "interpolate",
           "linear_forcing", "linear_trend", "load_scoped", "load_tables", "mds", "mean_flow_split",
           "nearest_entity", "persistence", "pooled_climatology", "read_block", "region_partition",
           "required_rows"]

MODELS = {
    "climatology": climatology,
    "pooled_climatology": pooled_climatology,
    "linear_forcing": linear_forcing,
    "interpolate": interpolate,
    "persistence": persistence,
    "linear_trend": linear_trend,
    "nearest_entity": nearest_entity,
    "mds": mds,
    "region_partition": region_partition,
    "mean_flow_split": mean_flow_split,
}
PARTITIONS = ("region_partition", "mean_flow_split")  # models that hand in labels, not values
VALUE_ROWS = ("holdout", "hidden_gaps", "held_out_entities")  # artifact rows a value model fills


def hand_in(model: str, workspace: Path) -> None:
    """Write `model`'s artifact and an `answer.json` without reported metrics into `workspace/work`.

    On a task without an artifact, or whose artifact rows the model cannot fill (labels for a value
    model, values for a partition), it writes nothing.
    """
    prompt = (workspace / "prompt.md").read_text()
    try:
        artifact = read_block(prompt, "Artifact")
    except ValueError:
        return
    wanted = ("entities",) if model in PARTITIONS else VALUE_ROWS
    if artifact["rows"]["kind"] not in wanted:
        return
    scope = read_block(prompt, "Scope")
    tables = load_scoped(workspace / "data", scope)
    frame = MODELS[model](tables, scope, artifact, required_rows(tables, scope, artifact))
    frame.to_parquet(workspace / "work" / artifact["file"], index=False)
    (workspace / "work" / "answer.json").write_text(json.dumps({"metrics": {}}))
