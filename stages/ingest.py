"""DVC entry point `ingest@<source>`: raw files -> tidy, validated Parquet in processed/sources/."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from stages.params import load_params
from stages.provenance import attribution, source_provenance
from stages.repository import write_tables
from stages.sources import SOURCES
from stages.tables import StreamedTables, Table


def ingest(source: str, raw_dir: Path, reader_params: dict, out_dir: Path) -> dict:
    """Read one raw source with its adapter and write its tables; returns the manifest.

    The manifest records the folder's provenance (stages/provenance.py): synthetic (our generator's
    checked record) or real; only real data is cited as its product. The folder is hashed for it
    on a thread of its own while the tables are read and written (at `make bench` size, 0.5 s of
    hashing that no longer precedes the reading); a record that does not check out still fails
    the ingest before its manifest is written, and its error comes before a reader's.
    """
    module = SOURCES[source]
    if not raw_dir.is_dir():
        raise FileNotFoundError(f"{raw_dir}: raw folder of source {source!r} does not exist")
    metadata = {"kind": "source", "source": source}  # completed once the folder is checked
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="provenance") as pool:
        checked = pool.submit(source_provenance, raw_dir, source)

        def tables() -> Iterator[Table | StreamedTables]:
            yield from module.read(raw_dir, module.Params(**reader_params))  # streams are written as read
            provenance = checked.result()
            metadata.update(attribution(provenance, module.CITATION, module.LICENSE), provenance=provenance)

        try:
            return write_tables(out_dir, tables(), metadata)
        except Exception:
            checked.result()  # a folder that is not what its record says: that error first
            raise


def main() -> None:
    """Ingest the source named on the command line with its params.yaml section."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source", choices=sorted(SOURCES))
    args = parser.parse_args()
    section = load_params().ingest[args.source]
    out_dir = Path("processed/sources") / args.source
    manifest = ingest(args.source, Path(section.raw_dir), section.params, out_dir)
    rows = {name: entry["rows"] for name, entry in manifest["tables"].items()}
    print(f"ingest@{args.source}: {manifest['provenance']['origin']} data, {rows}")
    quarantined = rows.get("quarantine", 0)
    if quarantined:
        print(f"ingest@{args.source}: {quarantined} quarantine entries (file, line, problem) "
              f"in {out_dir}/quarantine.parquet")


if __name__ == "__main__":
    main()
