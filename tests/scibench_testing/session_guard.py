"""A pytest plugin: a test session ends what it started and leaves nothing on the host.

- In every pytest process (controller and xdist workers), SIGTERM and SIGINT first end the
  process's descendants and sweep what they left (interrupt.py).
- The controller records the host at the start and, once every test has ended, fails the session
  when a process, folder or cgroup the tests made is still there (leftovers.py).
"""

from __future__ import annotations

import pytest
from scibench_testing import interrupt, leftovers

_START = pytest.StashKey[leftovers.Snapshot]()


def pytest_configure(config: pytest.Config) -> None:
    """Stop signals end the session's processes first."""
    interrupt.install()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Record the host's processes, folders and cgroups (once: in the controller, not in xdist workers)."""
    if not hasattr(session.config, "workerinput"):
        session.config.stash[_START] = leftovers.take()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session when anything the tests started or made is still on the host."""
    start = session.config.stash.get(_START, None)
    if start is None:
        return
    found = leftovers.left_behind(start)
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        write = reporter.write_line if reporter else print
        write(f"the test session left {len(found)} things on the host:")
        for line in found:
            write(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
