"""DVC entry point `synthesize@<source>`: write seeded raw files to raw/synthetic/<source>/."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from stages.params import load_params
from stages.provenance import RECORD, write_synthetic_record
from stages.synthesize import SYNTHESIZERS


def main() -> None:
    """Generate one source's synthetic raw files at the profile's scale."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source", choices=sorted(SYNTHESIZERS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    params = load_params()
    section = params.synthesize[args.source]
    module = SYNTHESIZERS[args.source]
    source_params = module.Params(**section.params, **section.scales[params.profile])
    out_dir = args.out or Path("raw/synthetic") / args.source
    if out_dir.exists():
        shutil.rmtree(out_dir)
    module.write(out_dir, source_params)
    write_synthetic_record(out_dir, args.source, source_params)  # what tells ingest these values are invented
    print(f"synthesize@{args.source}: {params.profile} profile written to {out_dir} (record: {RECORD})")


if __name__ == "__main__":
    main()
