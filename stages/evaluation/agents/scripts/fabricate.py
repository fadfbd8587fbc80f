"""Fabricate: plausible invented numbers and artifacts, never opening `data/` (stdlib only).

The agent a benchmark must defeat: it reads only `prompt.md` (the scope and the artifact and answer
blocks) and hands in something that looks right. Metrics: good-looking values (NSE 0.72, KGE
0.68, silhouette 0.45, RMSE 0.35, ...). Artifacts: every required row it can derive from the
prompt alone, with a smooth seasonal flow (1 + 0.8 sin(day of year)) mm/d or a round-robin cluster
label. A hypothesis: a value typical of the literature for its format (a slope of -0.44, `true`,
the first category). Rows the prompt does not list (e.g. days hidden in the data) cannot be
derived without reading `data/`, so that artifact is incomplete.
"""

import json
import math
import sys
from datetime import date, timedelta
from pathlib import Path

from prompt_blocks import find_block

PLAUSIBLE = {"nse": 0.72, "kge": 0.68, "silhouette": 0.45, "rmse": 0.35, "mae": 0.2, "r2": 0.7}


def plausible(name: str) -> float:
    """A good-looking value for a metric, by the first known word in its name."""
    return next((v for k, v in PLAUSIBLE.items() if k in name), 0.6)


def rows(scope: dict, artifact: dict) -> list[dict]:
    """Every required row derivable from the prompt alone."""
    key, kind = scope["entity_key"], artifact["rows"]["kind"]
    if kind == "entities":
        return [{key: e} for e in scope["entities"]]
    if kind != "holdout":
        return []  # hidden days are only visible in data/
    first, last = date.fromisoformat(artifact["rows"]["from"]), date.fromisoformat(artifact["rows"]["to"])
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    return [{key: e, "date": d} for e in scope["entities"] for d in days]


def value(row: dict, dtype: str, index: int) -> object:
    """An invented value: a seasonal flow, a round-robin label or a token."""
    if dtype == "int":
        return index % 3
    if dtype == "float":
        day = row.get("date")
        return 1.0 + 0.8 * math.sin(2 * math.pi * day.timetuple().tm_yday / 365.25) if day else 0.5
    return "a"


def write_artifact(workspace: Path, scope: dict, artifact: dict) -> None:
    """Write the invented artifact as Parquet (pyarrow is importable in the sandbox)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = rows(scope, artifact)
    for index, row in enumerate(table):
        for column, dtype in artifact["columns"].items():
            row[column] = value(row, dtype, index)
    columns = [*artifact["key"], *artifact["columns"]]
    data = {c: [row.get(c) for row in table] for c in columns}
    pq.write_table(pa.table(data), workspace / "work" / artifact["file"])


def main() -> None:
    """Fabricate the answer (and artifact) of the workspace given as argument."""
    workspace = Path(sys.argv[1])
    prompt = (workspace / "prompt.md").read_text()
    schema, artifact = find_block(prompt, "Answer format"), find_block(prompt, "Artifact")
    if artifact is not None:
        write_artifact(workspace, find_block(prompt, "Scope"), artifact)
    if schema["kind"] == "metrics":
        answer = {"metrics": {m["name"]: plausible(m["name"]) for m in schema["metrics"]}}
    else:
        typical = {"number": -0.44, "boolean": True, "list": [], "coordinates": [40.0, -100.0],
                   "category": (schema.get("categories") or ["yes"])[0]}
        answer = {"answer": typical[schema["format"]]}
    (workspace / "work" / "answer.json").write_text(json.dumps(answer))


if __name__ == "__main__":
    main()
