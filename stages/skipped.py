"""What a stage that cannot run here leaves: its outputs, each saying why, so that DVC and what reads them go on.

The stages of ST-Bench's protocol (optimize@, evaluate@ and score@ of each run) need an LLM endpoint;
without one each writes its outputs with the reason instead of results, and whatever reads them
(the comparison, the report) shows the reason.
"""

from __future__ import annotations

from pathlib import Path

REASON_FILE = "SKIPPED"


def write_skipped(folder: Path, reason: str) -> None:
    """Leave the reason in `folder`; what it holds stays (a journal of earlier runs is never lost)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / REASON_FILE).write_text(reason + "\n")


def clear_skipped(folder: Path) -> None:
    """The stage runs now: a reason an earlier skip left no longer holds."""
    (folder / REASON_FILE).unlink(missing_ok=True)


def skipped_reason(folder: Path) -> str | None:
    """Why the stage that writes `folder` skipped, or None when it ran."""
    path = folder / REASON_FILE
    return path.read_text().strip() if path.is_file() else None
