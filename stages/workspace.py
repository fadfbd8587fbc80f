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

ANSWER_FILE = "answer.json"
MAX_ANSWER_BYTES = 1 << 20
MAX_ARTIFACT_BYTES = 64 << 20  # an artifact (predictions for every basin-day) or a bootstrap file


def make_workspace(prompt: str, public_dir: Path, parent: Path | None = None) -> Path:
    """Create a fresh workspace holding the prompt and a copy (hard link when possible) of public files."""
    workspace = Path(tempfile.mkdtemp(prefix="scibench-ws-", dir=parent))
    (workspace / "prompt.md").write_text(prompt)
    data = workspace / "data"
    data.mkdir()
    for source in sorted(public_dir.iterdir()):
        target = data / source.name
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
    (workspace / "work").mkdir()
    return workspace


def remove_workspace(workspace: Path) -> None:
    """Delete a workspace after its results were recorded."""
    shutil.rmtree(workspace, ignore_errors=True)
