"""What differs between two built benchmarks, file by file: `python -m benchmarks.build_diff A B`.

For a restructuring that must leave the benchmark as it was, or a new version whose changes must be
the intended ones. Files are compared byte for byte; a Parquet file that differs in bytes is also
compared as a table with its metadata less the pandas version its writer recorded (two installs
of the same code can differ there and nowhere else). Prints the counts and every other difference.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq


def same_table(a: Path, b: Path) -> bool:
    """Whether two Parquet files hold the same table, schema and metadata, but the writer's pandas version."""
    ta, tb = pq.read_table(a), pq.read_table(b)

    def metadata(table) -> dict:
        fields = dict(table.schema.metadata or {})
        if b"pandas" in fields:
            pandas = json.loads(fields[b"pandas"])
            pandas.pop("pandas_version", None)
            fields[b"pandas"] = json.dumps(pandas, sort_keys=True).encode()
        return fields

    return (ta.schema.remove_metadata() == tb.schema.remove_metadata() and ta.equals(tb)
            and metadata(ta) == metadata(tb))


def diff(a: Path, b: Path) -> dict:
    """Counts of identical files, and the paths that differ or exist on one side only."""
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    counts, differ = Counter(), []
    for name in sorted(files_a & files_b):
        if (a / name).read_bytes() == (b / name).read_bytes():
            counts["identical"] += 1
        elif name.endswith(".parquet") and same_table(a / name, b / name):
            counts["same_table"] += 1
        else:
            differ.append(name)
    return {"identical": counts["identical"], "same_table_but_pandas_version": counts["same_table"],
            "differ": differ, "only_in_a": sorted(files_a - files_b), "only_in_b": sorted(files_b - files_a)}


def main() -> None:
    """Print the difference of the two folders given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    result = diff(args.a, args.b)
    print(f"identical {result['identical']}, same table but the pandas version "
          f"{result['same_table_but_pandas_version']}, differ {len(result['differ'])}, "
          f"only in a {len(result['only_in_a'])}, only in b {len(result['only_in_b'])}")
    for kind in ("differ", "only_in_a", "only_in_b"):
        for name in result[kind]:
            print(f"{kind}: {name}")


if __name__ == "__main__":
    main()
