"""benchmarks/build_diff.py: two builds compared file by file, Parquet by its table when the bytes differ."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.build_diff import diff


def write(path, frame: pd.DataFrame, pandas_version: str) -> None:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata)
    metadata[b"pandas"] = metadata[b"pandas"].replace(
        f'"pandas_version": "{pd.__version__}"'.encode(), f'"pandas_version": "{pandas_version}"'.encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(metadata), path)


def test_builds_differ_only_where_their_content_does(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    for root, version in ((a, "3.1.1"), (b, "3.1.2")):
        write(root / "same.parquet", frame, version)
        write(root / "other.parquet", frame.assign(x=[1.0, 2.0 if root == a else 2.5]), version)
        (root / "labels.json").write_text('{"gold": 1}')
    (a / "gone.txt").write_text("x")
    (b / "new.txt").write_text("y")
    assert (a / "same.parquet").read_bytes() != (b / "same.parquet").read_bytes()
    assert diff(a, b) == {"identical": 1, "same_table_but_pandas_version": 1, "differ": ["other.parquet"],
                          "only_in_a": ["gone.txt"], "only_in_b": ["new.txt"]}
