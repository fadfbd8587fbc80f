"""Suite-wide hooks: the `realdata` marker (see scibench_testing/realdata.py)."""

from __future__ import annotations

import pytest
from scibench_testing.realdata import MARKER, realdata


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*parts): reads ../shared/realdata/<parts>; skipped when "
                            "absent, failed when SCIBENCH_REQUIRE_REALDATA=1")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Check every real sample a test is marked with before its fixtures run."""
    for mark in item.iter_markers(MARKER):
        realdata(*mark.args)
