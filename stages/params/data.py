"""The data layer's sections: `synthesize`, `ingest` and `align` (one entry per source or domain)."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from stages.params.section import Profile, Section


class SynthesizeSource(Section):
    """Generator settings shared by all profiles, plus the size of each profile."""

    params: dict[str, Any] = {}
    scales: dict[Profile, dict[str, Any]]


class IngestSource(Section):
    """Where a source's raw files are and how its reader behaves (reader `Params`)."""

    raw_dir: str
    params: dict[str, Any] = {}


class AlignDomain(Section):
    """Which sources an aligned repository joins (each named once)."""

    sources: list[str]

    @field_validator("sources")
    @classmethod
    def _named_once(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("lists no source")
        if len(set(value)) != len(value):
            raise ValueError(f"lists a source twice: {value}")
        return value
