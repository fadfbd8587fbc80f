"""Query workspaces: the only thing an agent or annotator script ever sees.

<workspace>/prompt.md   the rendered prompt (read-only inside the sandbox)
<workspace>/data/       the task's public files (read-only inside the sandbox)
<workspace>/work/       writable; the program writes work/answer.json here
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

ANSWER_FILE = "answer.json"
MAX_ANSWER_BYTES = 1 << 20


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


def read_answer(workspace: Path) -> str | None:
    """Return the text of work/answer.json, or None when the program wrote none.

    An oversized or undecodable file is returned as a marker text that will not parse, so it is
    scored `unparseable` rather than crashing the harness.
    """
    path = workspace / "work" / ANSWER_FILE
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_ANSWER_BYTES:
        return "<answer.json larger than 1 MiB>"
    try:
        return path.read_text()
    except UnicodeDecodeError:
        return "<answer.json is not UTF-8>"


def remove_workspace(workspace: Path) -> None:
    """Delete a workspace after its results were recorded."""
    shutil.rmtree(workspace, ignore_errors=True)
