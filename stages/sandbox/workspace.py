"""Query workspaces: the only thing an agent or annotator script ever sees.

<workspace>/prompt.md   the rendered prompt (read-only inside the sandbox)
<workspace>/data/       the task's public files (read-only inside the sandbox)
<workspace>/work/       used only by unsandboxed runs; in the sandbox, work/ is a size-capped
                        tmpfs whose files the harness copies out as untrusted input
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from stages.sandbox import debris

ANSWER_FILE = "answer.json"
MAX_ANSWER_BYTES = 1 << 20
MAX_ARTIFACT_BYTES = 64 << 20  # an artifact (predictions for every basin-day) or a bootstrap file


def link_file(source: Path, target: Path) -> None:
    """Place `source` at `target` as a hard link, or a copy where the filesystem allows no link."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def link_tree(source_dir: Path, target_dir: Path) -> int:
    """Link every file under `source_dir` to the same relative path under `target_dir`; returns the count.

    Symlinks are skipped (a public folder holds none; this keeps a planted one from being followed).
    """
    files = sorted(p for p in source_dir.rglob("*") if p.is_file() and not p.is_symlink())
    for source in files:
        link_file(source, target_dir / source.relative_to(source_dir))
    return len(files)


def make_workspace(prompt: str, public_dir: Path, parent: Path | None = None) -> Path:
    """Create a fresh workspace holding the prompt and a copy (hard link when possible) of public files.

    Its name carries this process's owner tag, so a harness killed before removing it has it
    swept by the next one (stages/sandbox/debris.py).

    A native modality staged as a folder (GeoTIFF layers) keeps its subfolder under `data/`.
    """
    workspace = Path(tempfile.mkdtemp(prefix=debris.temp_prefix("ws"), dir=parent))
    (workspace / "prompt.md").write_text(prompt)
    (workspace / "data").mkdir()
    link_tree(public_dir, workspace / "data")
    (workspace / "work").mkdir()
    return workspace


def remove_workspace(workspace: Path) -> None:
    """Delete a workspace after its results were recorded."""
    shutil.rmtree(workspace, ignore_errors=True)
