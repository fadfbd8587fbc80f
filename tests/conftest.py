"""Suite-wide hooks: the `realdata` marker (see scibench_testing/realdata.py), the longest modules
first, and the session guard (scibench_testing/session_guard.py: a stopped session ends what it
started; a finished one fails if it left anything on the host)."""

from __future__ import annotations

import pytest
from scibench_testing.realdata import MARKER, realdata

pytest_plugins = ["scibench_testing.session_guard"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*parts): reads ../shared/realdata/<parts>; skipped when "
                            "absent, failed when SCIBENCH_REQUIRE_REALDATA=1")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Check every real sample a test is marked with before its fixtures run."""
    for mark in item.iter_markers(MARKER):
        realdata(*mark.args)


# Modules whose setup takes minutes (the tiny project built end to end, crash-safety runs), and the
# next longest: they start first, so that with `-n 2 --dist loadfile` (make test) the other worker
# runs the rest of the suite beside them instead of after them.
LONGEST_FIRST = ("test_pipeline.py", "test_crash_safety.py", "test_llm_resume.py", "test_scibench_testing.py",
                 "test_real_data_catalog.py", "test_camels_tasks.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the suite longest module first (stable within a module and among the rest)."""
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))

