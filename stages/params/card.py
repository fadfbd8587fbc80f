"""The `card` section: what only the publisher can say about a release (its Croissant file)."""

from __future__ import annotations

from datetime import date

from stages.params.section import Section


class Creator(Section):
    """A person credited in the release's Croissant file."""

    name: str
    url: str | None = None


class CardParams(Section):
    """What only the publisher can say about a release (`card`: processed/release/)."""

    name: str = "scibench"
    description: str = "Benchmark tasks for AI agents that analyse scientific data."
    version: str | None = None  # None: the scibench package's version
    url: str | None = None  # where the release is published
    license: str | None = None  # an SPDX id or a URL; None: not chosen yet (the card says so)
    creators: list[Creator] = []
    cite_as: str | None = None  # a BibTeX entry
    date_published: date | None = None
    base_url: str | None = None  # prefix of contentUrl (None: paths relative to croissant.json)
