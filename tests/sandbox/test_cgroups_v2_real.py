"""The cgroup v2 path on a real v2 hierarchy: a fresh cgroup2 mount in a mount and cgroup namespace.

`unshare --mount --cgroup` gives a program its own view: /sys/fs/cgroup is covered with a tmpfs
holding only a cgroup2 mount at `unified` (no v1 hierarchy is visible, so `create` can only take
the v2 path), the memory, pids and cpu controllers are enabled below the namespace's root, and a
sandboxed program that allocates 512 MB under a 128 MB total is killed by the kernel's OOM killer,
recorded as `memory` in `limits_hit`, with "cgroup v2" as its isolation.

The kernel keeps one v2 hierarchy and lets a controller be in only one hierarchy: a controller
mounted as cgroup v1 (as memory, pids and cpu are on hosts that mount v1) is absent from every
cgroup2 mount, namespaced or not. The test then skips, naming the hierarchies that hold them
(/proc/cgroups).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the checkout (not scibench_testing.project: it needs pandas)

NEEDED = ("memory", "pids", "cpu")

INSIDE = r'''
import os, subprocess, sys
from pathlib import Path
cg = Path("/sys/fs/cgroup")
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(cg)], check=True)
(cg / "unified").mkdir()
subprocess.run(["mount", "-t", "cgroup2", "none", str(cg / "unified")], check=True)
available = (cg / "unified/cgroup.controllers").read_text().split()
print("controllers", " ".join(available), flush=True)
if not {"memory", "pids", "cpu"} <= set(available):
    sys.exit(0)
(cg / "unified/cgroup.subtree_control").write_text("+memory +pids +cpu")
from stages.sandbox import run_sandboxed
from scibench_testing.limits import limits_with

workspace = Path(sys.argv[1])
bomb = "x = bytearray(512 << 20); x[::4096] = b'1' * len(x[::4096])"
result = run_sandboxed(workspace, [sys.executable, "-c", bomb],
                       limits=limits_with(wall_seconds=60, memory_bytes=128 << 20, address_space_bytes=4 << 30))
print("isolation", result.isolation, flush=True)
print("limits", ",".join(result.limits_hit), flush=True)
print("exit", result.exit_code, flush=True)
'''


def bound_to_v1() -> dict[str, str]:
    """Controller -> the v1 hierarchy id holding it, for the controllers the v2 path needs."""
    rows = [line.split() for line in Path("/proc/cgroups").read_text().splitlines()[1:]]
    return {row[0]: row[1] for row in rows if row[0] in NEEDED and row[1] != "0"}


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("bwrap") is None,
                    reason="needs root, unshare(1) and bubblewrap")
def test_a_sandboxed_memory_bomb_on_a_fresh_cgroup2_mount(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "prompt.md").write_text("allocate\n")
    (tmp_path / "work").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["unshare", "--mount", "--cgroup", "--propagation", "private", sys.executable, "-c",
                           INSIDE, str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    available = set(lines["controllers"].split())
    if not set(NEEDED) <= available:
        held = ", ".join(f"{name} (v1 hierarchy {hid})" for name, hid in sorted(bound_to_v1().items()))
        pytest.skip(f"this kernel's cgroup2 hierarchy offers only {sorted(available)}: {held} are mounted "
                    "as cgroup v1, and a controller is in one hierarchy only")
    assert lines["isolation"].endswith("cgroup v2")
    assert lines["limits"].split(",")[0] == "memory"
    assert lines["exit"] == str(128 + 9)
