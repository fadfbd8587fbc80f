"""DVC entry point `align@<domain>`: join a domain's sources into an aligned repository."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stages.domains import ALIGNERS
from stages.params import load_params
from stages.provenance import repository_provenance
from stages.repository import SourceTables, write_tables


def align(domain: str, sources: list[str], sources_dir: Path, out_dir: Path) -> dict:
    """Read the domain's source tables, join them, write the repository; returns the manifest.

    Joining real and synthetic sources is allowed (e.g. real basins with the synthetic mosaic) but
    never silent: a warning goes to stderr and into the manifest's `provenance`.
    """
    inputs = {source: SourceTables(sources_dir / source) for source in sources}  # tables load on first use
    manifests = {source: inputs[source].manifest for source in sources}
    provenance = repository_provenance(manifests)
    if provenance["mixed"]:
        print(f"align@{domain}: warning: {provenance['warning']}", file=sys.stderr)
    aligned = ALIGNERS[domain]
    tables = aligned.align(inputs)
    metadata = {
        "kind": "repository",
        "domain": domain,
        "entity_key": aligned.ENTITY_KEY,
        "sources": {
            s: {key: manifests[s][key] for key in ("citation", "license", "stands_in_for", "provenance")}
            for s in sources
        },
        "provenance": provenance,
    }
    return write_tables(out_dir, tables, metadata)


def main() -> None:
    """Align the domain named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("domain", choices=sorted(ALIGNERS))
    args = parser.parse_args()
    section = load_params().align[args.domain]
    out_dir = Path("processed/repositories") / args.domain
    manifest = align(args.domain, section.sources, Path("processed/sources"), out_dir)
    print(f"align@{args.domain}: { {n: e['rows'] for n, e in manifest['tables'].items()} }")


if __name__ == "__main__":
    main()
