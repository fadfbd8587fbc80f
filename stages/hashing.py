"""Content hashes: every id in scibench is a hash of what defines it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise a JSON-able value with sorted keys and no whitespace, for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def content_hash(value: Any, length: int = 16) -> str:
    """Return the first `length` hex digits of the SHA-256 of a value's canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def file_sha256(path: Path) -> str:
    """Return the full SHA-256 hex digest of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_json(path: Path, value: Any) -> None:
    """Write JSON deterministically (sorted keys, 2-space indent, trailing newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
