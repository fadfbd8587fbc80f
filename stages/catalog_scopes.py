"""Scope libraries (`catalog/<domain>/scopes.yaml`), and the YAML reading every catalog file shares.

A scope is a named slice of a domain (ST-Bench §2.2): which entities and which period a query
covers. `stages.construction.scopes` resolves one against a repository and renders it into the
prompt's scope block; `read_prompt_block` reads that block back (annotators, agents and the scorer
do), so it sits here, below construction and scoring alike.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stages import yamlfile

__all__ = ["CatalogError", "QueryBounds", "ScopeLibrary", "ScopeSpec", "Strict", "load_scopes", "read_prompt_block",
           "read_yaml"]

BLOCK = r"## {name}\n.*?```json\n(?P<json>.*?)\n```"  # a heading, then the first ```json fence


class Strict(BaseModel):
    """Base for everything parsed from YAML: unknown keys fail fast."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CatalogError(ValueError):
    """A catalog file is missing or invalid; the message names the file."""


def read_yaml(path: Path) -> Any:
    """A catalog file's YAML; an unreadable file is a `CatalogError` naming it."""
    try:
        return yamlfile.read_yaml(path)
    except (OSError, yaml.YAMLError) as error:
        raise CatalogError(f"{path}: {error}") from error


class ScopeSpec(Strict):
    """A named slice of a domain: which entities and which period a query covers (ST-Bench §2.2)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    kind: Literal["geographic", "temporal", "sample_size", "attribute"]
    description: str
    citation: str = ""
    entities: dict[str, Any] = {}
    years: tuple[int, int] | None = None
    period: tuple[date, date] | None = None  # a sub-year window, inclusive (e.g. one season)
    sample: int | None = None
    seed: int = 0
    # the query-size bound (from the library's `bounds` unless the scope sets its own): a larger
    # slice is sampled down to `max_entities` (seeded by `seed`) and clipped to its last `max_years`
    max_entities: int | None = Field(default=None, ge=1)
    max_years: int | None = Field(default=None, ge=1)


class QueryBounds(Strict):
    """The most entities and calendar years one query of a domain covers, at every profile."""

    entities: int | None = Field(default=None, ge=1)
    years: int | None = Field(default=None, ge=1)


class ScopeLibrary(Strict):
    """`catalog/<domain>/scopes.yaml`."""

    bounds: QueryBounds = QueryBounds()
    scopes: list[ScopeSpec]

    def bounded(self) -> list[ScopeSpec]:
        """The scopes with the library's bounds filled in where a scope sets none."""
        return [scope.model_copy(update={
            "max_entities": scope.max_entities if scope.max_entities is not None else self.bounds.entities,
            "max_years": scope.max_years if scope.max_years is not None else self.bounds.years,
        }) for scope in self.scopes]


def load_scopes(domain_dir: Path) -> dict[str, ScopeSpec]:
    """Load `scopes.yaml` of a domain as a dict by scope name, with its query-size bounds applied."""
    path = domain_dir / "scopes.yaml"
    try:
        library = ScopeLibrary.model_validate(read_yaml(path))
    except ValidationError as error:
        raise CatalogError(f"{path}: {error}") from error
    return {scope.name: scope for scope in library.bounded()}


def read_prompt_block(prompt: str, name: str) -> dict:
    """The JSON of a rendered prompt's `## <name>` block (`Scope`, `Answer format`, `Artifact`).

    The harness's reader; programs in the sandbox read the same blocks with their own copy of
    `BLOCK` (`scripts/prompt_blocks.py`, `annotator_common.read_block`), held to this one by
    `tests/construction/test_prompt_blocks.py`.
    """
    match = re.search(BLOCK.format(name=re.escape(name)), prompt, re.DOTALL)
    if match is None:
        raise ValueError(f"prompt has no '## {name}' block with a ```json fence")
    return json.loads(match.group("json"))
