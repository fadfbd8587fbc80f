"""Build aligned repositories in a temporary folder exactly as `ingest@<source>` and `align@<domain>` do."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stages.align import align
from stages.ingest import ingest
from stages.params import load_params
from stages.provenance import write_synthetic_record
from stages.repository import read_manifest, read_table
from stages.synthesize import SYNTHESIZERS
from stages.synthesize.imagery import Params as ImageryParams

TINY_IMAGERY = ImageryParams(pixel_m=16000, tile_px=64)


def synthesize_and_ingest(source: str, params, root: Path, reader_params: dict | None = None) -> Path:
    """Write the source's synthetic raw files under root/raw/<source>, ingest to root/sources/<source>.

    The files get their provenance record as `synthesize@<source>` writes it, so they ingest as synthetic.
    """
    raw = root / "raw" / source
    SYNTHESIZERS[source].write(raw, params)
    write_synthetic_record(raw, source, params)
    ingest(source, raw, reader_params or {}, root / "sources" / source)
    return raw


def align_domain(domain: str, sources: list[str], root: Path, name: str | None = None) -> dict[str, pd.DataFrame]:
    """Align from root/sources into root/repositories/<name or domain>; every table read back."""
    out = root / "repositories" / (name or domain)
    manifest = align(domain, sources, root / "sources", out)
    return {table: read_table(out, table) for table in manifest["tables"]} | {"_manifest": read_manifest(out)}


def align_with_imagery(domain: str, source: str, params, root: Path) -> tuple[Path, dict[str, pd.DataFrame]]:
    """Synthesize and ingest `source` and the tiny imagery mosaic, align `domain` from both.

    Returns the imagery raw folder and the repository's tables.
    """
    synthesize_and_ingest(source, params, root)
    image_raw = synthesize_and_ingest("imagery", TINY_IMAGERY, root)
    return image_raw, align_domain(domain, [source, "imagery"], root)


def profile_repository(domain: str, root: Path, params_file: Path, profile: str = "tiny") -> Path:
    """The repository of a domain whose sources are synthesized, at a profile's scale, as the DAG builds it.

    Synthesize, ingest and align read their settings from `params_file` (the project's params.yaml);
    everything is written under `root`. Returns root/repositories/<domain>.
    """
    params = load_params(params_file)
    sources = params.align[domain].sources
    for source in sources:
        section = params.synthesize[source]
        generator = SYNTHESIZERS[source].Params(**section.params, **section.scales[profile])
        synthesize_and_ingest(source, generator, root, params.ingest[source].params)
    align(domain, sources, root / "sources", root / "repositories" / domain)
    return root / "repositories" / domain
