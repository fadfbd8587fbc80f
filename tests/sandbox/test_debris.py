"""What killed harnesses leave, and who clears it: stages/sandbox/debris.py.

The first tests build tagged folders and cgroup directories by hand and check exactly which a sweep
takes (gone owners only, never a live one's). The kill tests start a real harness that keeps two
sandboxes busy (scibench_testing/busy_harness.py) and end it 20 times at seeded random moments:
SIGTERM and SIGINT must leave nothing at all, SIGKILL no process (its folders and cgroups are swept
by the next harness, which says so); after the 20 kills nothing of any of them is left.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scibench_testing.processes import descendants, survivors

from stages.sandbox import debris

ROOT = Path(__file__).resolve().parents[2]  # the checkout (not scibench_testing.project: it needs pandas)

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
PIDS_V1 = Path("/sys/fs/cgroup/pids")


def gone_tag() -> str:
    """This process's pid with another start time: the owner of a pid that was reused."""
    return f"{os.getpid()}.{debris.start_time(os.getpid()) + 1}"


def test_owner_tag_is_the_pid_and_its_start_time_from_proc() -> None:
    start = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19]
    assert debris.owner_tag() == f"{os.getpid()}.{start}"
    assert debris.temp_prefix("ws") == f"scibench-ws-{os.getpid()}.{start}-"
    with pytest.raises(ValueError, match="unknown temp folder kind 'other'"):
        debris.temp_prefix("other")


def test_find_takes_the_leftovers_of_gone_owners_only(tmp_path: Path) -> None:
    live = subprocess.Popen(["sleep", "30"])
    try:
        temp, cgroup = tmp_path / "tmp", tmp_path / "cgroup"
        gone, mine, other = gone_tag(), debris.owner_tag(), debris.owner_tag(live.pid)
        names = [f"scibench-ws-{gone}-a1", f"scibench-llm-{gone}-b2", f"scibench-generated-{gone}-c3",
                 f"scibench-ws-{mine}-d4", f"scibench-ws-{other}-e5", "scibench-ws-untagged", "elsewhere"]
        for name in names:
            (temp / name).mkdir(parents=True)
        groups = [cgroup / "memory/harness" / f"scibench-{gone}-0123456789ab",
                  cgroup / "pids" / f"scibench-{gone}-0123456789ab",
                  cgroup / "pids" / "scibench-999999999-00000000000a",  # the old layout: pid only
                  cgroup / "pids" / f"scibench-{os.getpid()}-00000000000b",  # old layout, live pid
                  cgroup / "pids" / f"scibench-{mine}-00000000000c"]
        for group in groups:
            group.mkdir(parents=True)
        found = debris.find(temp_dirs=(temp,), cgroup_root=cgroup)
        assert found.folders == [temp / names[2], temp / names[1], temp / names[0]]  # sorted by name
        assert set(found.cgroups) == {groups[0], groups[1], groups[2]}
        assert found.owners == {os.getpid(), 999999999}
        mine_only = debris.find(owner=mine, temp_dirs=(temp,), cgroup_root=cgroup)
        assert (mine_only.folders, mine_only.cgroups) == ([temp / names[3]], [groups[4]])
    finally:
        live.kill()
        live.wait()


def test_sweep_removes_them_and_says_so_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gone = gone_tag()
    (tmp_path / f"scibench-ws-{gone}-x1" / "data").mkdir(parents=True)
    (tmp_path / f"scibench-ws-{gone}-x1" / "data" / "table.csv").write_text("a\n1\n")
    (tmp_path / f"scibench-ws-{debris.owner_tag()}-x2").mkdir()
    group = tmp_path / "cgroup" / "pids" / f"scibench-{gone}-0123456789ab"
    group.mkdir(parents=True)
    swept = debris.sweep(temp_dirs=(tmp_path,), cgroup_root=tmp_path / "cgroup")
    assert (len(swept.folders), len(swept.cgroups), swept.killed) == (1, 1, 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cgroup", f"scibench-ws-{debris.owner_tag()}-x2"]
    assert not group.exists()
    assert capsys.readouterr().err == (
        "scibench: swept the leftovers of killed runs: 1 workspaces/folders, 1 cgroups, 0 processes of "
        f"1 harness runs that are gone (pids {os.getpid()})\n")
    assert not debris.sweep(temp_dirs=(tmp_path,), cgroup_root=tmp_path / "cgroup")
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(os.geteuid() != 0 or not (PIDS_V1 / "cgroup.procs").exists(),
                    reason="needs root and the cgroup v1 pids hierarchy")
def test_sweep_kills_a_process_left_in_a_gone_owners_cgroup(tmp_path: Path) -> None:
    group = PIDS_V1 / f"scibench-{gone_tag()}-0123456789ab"
    group.mkdir()
    stray = subprocess.Popen(["sleep", "60"])
    try:
        (group / "cgroup.procs").write_text(str(stray.pid))
        swept = debris.sweep(temp_dirs=(tmp_path,), cgroup_root=PIDS_V1)
        assert stray.wait(timeout=10) == -signal.SIGKILL
        assert (swept.cgroups, swept.killed, group.exists()) == ([group], 1, False)
    finally:
        stray.kill()
        stray.wait()
        if group.exists():
            group.rmdir()


def start_busy_harness(public: Path, threads: int, seconds: float, log: Path) -> tuple[subprocess.Popen, str]:
    """Start the busy harness; return it with its owner tag once its handlers are in place."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"}
    process = subprocess.Popen([sys.executable, "-m", "scibench_testing.busy_harness", str(threads), str(seconds),
                                str(public)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=open(log, "ab"), text=True, start_new_session=True)  # noqa: SIM115
    line = process.stdout.readline()
    assert line.startswith("started "), (line, log.read_text())
    return process, line.split()[1]


def leftovers(tag: str) -> tuple[list[Path], list[Path]]:
    found = debris.find(owner=tag)
    return found.folders, found.cgroups


@needs_bwrap
def test_twenty_kills_leave_no_process_folder_or_cgroup(tmp_path: Path) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (public / "table.csv").write_text("x\n1\n")
    log = tmp_path / "harness.log"
    rng = random.Random(20261207)
    signals = [signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGKILL] * 5
    killed_hard: list[str] = []
    for number, signum in enumerate(signals):
        process, tag = start_busy_harness(public, threads=2, seconds=30, log=log)
        time.sleep(rng.uniform(0.0, 1.5))  # before, while and after the two sandboxes start
        family = descendants(process.pid)
        process.send_signal(signum)
        assert process.wait(timeout=60) == -signum, (number, signum)
        assert survivors(family) == [], (number, signum)
        if signum == signal.SIGKILL:
            if leftovers(tag) != ([], []):  # killed before it made anything: nothing to sweep
                killed_hard.append(tag)
        else:
            assert leftovers(tag) == ([], []), (number, signum)
    # A last harness sweeps what the SIGKILLed ones left, and says whose it was. What a later harness of
    # the loop swept is gone already; its line may be lost when that harness was itself killed between
    # sweeping and writing it, so only what is left now is checked against the last harness's lines.
    left = [tag for tag in killed_hard if leftovers(tag) != ([], [])]
    logged = len(log.read_text().splitlines())
    process, _ = start_busy_harness(public, threads=1, seconds=0.1, log=log)
    assert process.wait(timeout=60) == 0
    assert process.stdout.read().splitlines() == ["run 0 ", "harness done"]
    assert all(leftovers(tag) == ([], []) for tag in killed_hard)
    sweeps = [line for line in log.read_text().splitlines()[logged:] if line.startswith("scibench: swept")]
    swept_pids = {pid for line in sweeps for pid in line.split("(pids ")[1].rstrip(")").split(", ")}
    assert left and {tag.split(".")[0] for tag in left} <= swept_pids


def test_a_planted_symlink_or_file_with_a_gone_owners_name_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    (temp / f"scibench-ws-{gone_tag()}-link").symlink_to(target)
    (temp / f"scibench-ws-{gone_tag()}-file").write_text("a file\n")
    assert not debris.sweep(temp_dirs=(temp,), cgroup_root=tmp_path / "no-cgroups")
    assert (target / "keep.txt").read_text() == "keep\n"
    names = [f"scibench-ws-{gone_tag()}-file", f"scibench-ws-{gone_tag()}-link"]
    assert sorted(p.name for p in temp.iterdir()) == names


def test_what_cannot_be_removed_is_not_reported_as_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / f"scibench-ws-{gone_tag()}-x1").mkdir()
    monkeypatch.setattr(debris.shutil, "rmtree", lambda path, ignore_errors: None)  # as for another user's folder
    assert not debris.sweep(temp_dirs=(tmp_path,), cgroup_root=tmp_path / "no-cgroups")
