"""The real sample files in ../shared/realdata, and the one rule for when they are missing.

A test that reads real files asks for them through `realdata(...)` (inside a test or fixture) or
the `requires_realdata(...)` marker (on a test, class or module). Where the folder is absent the
test is skipped with the missing path as the reason; with `SCIBENCH_REQUIRE_REALDATA=1` (set by
`.ci/run`, where the folder is present) the same absence is a failure, so a moved or renamed
sample cannot quietly turn ~100 real-file tests into skips. `SCIBENCH_REALDATA` points at another
copy of the folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REALDATA = Path(
    os.environ.get("SCIBENCH_REALDATA")
    or Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
)
REQUIRE_VARIABLE = "SCIBENCH_REQUIRE_REALDATA"
MARKER = "realdata"


def realdata(*parts: str) -> Path:
    """Return `REALDATA/<parts>`, skipping the test when it is missing (failing when required)."""
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        missing(path)
    return path


def requires_realdata(*parts: str) -> pytest.MarkDecorator:
    """Mark a test as reading `REALDATA/<parts>`; checked by tests/conftest.py before any fixture."""
    return getattr(pytest.mark, MARKER)(*parts)


def missing(path: Path) -> NoReturn:
    """Skip, or fail when `SCIBENCH_REQUIRE_REALDATA=1`, because a real sample is not at `path`."""
    reason = f"real sample not found at {path} (../shared/realdata)"
    if os.environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"{reason}, and {REQUIRE_VARIABLE}=1 requires it", pytrace=False)
    pytest.skip(reason)
