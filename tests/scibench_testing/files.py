"""Every file under a folder, for byte-for-byte determinism checks."""

from __future__ import annotations

import hashlib
from pathlib import Path


def folder_bytes(root: Path) -> dict[str, bytes]:
    """`relative/posix/path -> bytes` of every file under `root`, in sorted order."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def folder_sha256(root: Path) -> dict[str, str]:
    """`relative/posix/path -> SHA-256` of every file under `root`, in sorted order (big trees)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}
