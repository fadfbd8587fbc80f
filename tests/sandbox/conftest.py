"""Fixtures several sandbox test modules share.

`fs` is the fake cgroup tree of the test_cgroups_*.py modules (cgroup_fakes.py); `no_bwrap` makes
bubblewrap unavailable to the test_run_*.py runs. The workspace fixture `ws` is not here: the
test_init_*.py and test_run_*.py modules each define their own, from init_helpers.py's
`empty_workspace` and run_helpers.py's `make_workspace` (the latter with a data/x.csv).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch
from sandbox.cgroup_fakes import FakeCgroupfs

from stages import sandbox
from stages.sandbox import cgroups


@pytest.fixture
def fs(tmp_path: Path, monkeypatch: MonkeyPatch) -> FakeCgroupfs:
    fixed = uuid.UUID("0123456789abcdef0123456789abcdef")
    monkeypatch.setattr(cgroups, "uuid", SimpleNamespace(uuid4=lambda: fixed))
    return FakeCgroupfs(tmp_path / "cgroup", monkeypatch)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
