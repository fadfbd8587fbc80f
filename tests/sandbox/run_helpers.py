"""What the test_run_*.py modules share: the markers, the workspace, and `run_python`."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from scibench_testing.limits import limits_with

from stages import sandbox
from stages.sandbox import Limits, RunResult, run_sandboxed

PY = sys.executable
LIMITS = limits_with(wall_seconds=60)
AS_ROOT = os.geteuid() == 0
needs_bwrap = pytest.mark.skipif(
    not sandbox.bwrap_available(),
    reason="bubblewrap is not installed (apt-get install -y bubblewrap)",
)
needs_cgroup = pytest.mark.skipif(
    not AS_ROOT, reason="per-run cgroups need root here (an ordinary user keeps per-process rlimits)"
)


def make_workspace(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text("Report the mean of x.\n")
    (root / "data" / "x.csv").write_text("x\n1\n2\n")
    return root


def run_python(ws: Path, code: str, limits: Limits = LIMITS, **kwargs) -> RunResult:
    return run_sandboxed(ws, [PY, "-c", textwrap.dedent(code)], limits=limits, **kwargs)
