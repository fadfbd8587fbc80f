"""Specification of what a made group (stages/sandbox/cgroups.py `Cgroup`) does, on the fake tree.

Its counters name the limits the kernel enforced (v1 and v2, and nothing for counters a kernel does
not keep or a group that is gone); its CPU time is read in each version's unit and the CPU budget,
once passed, stays passed; `remove` takes every directory away, waiting out a busy one for a while;
`cgroups.kill_all` kills every listed process within fifty rounds. Then the readers of control files they
rest on (`_keyed`, `_pids`, `_read`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from pytest import MonkeyPatch
from sandbox.cgroup_fakes import FakeCgroupfs, v1_group, v2_group

from stages.sandbox import cgroups
from stages.sandbox.cgroups import _keyed, _pids, _read


def test_v1_counters_name_the_limits_the_kernel_enforced(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    assert group.limits_hit() == []
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    assert group.limits_hit() == ["memory"]
    (group.dirs["pids"] / "pids.events").write_text("max 3\n")
    assert group.limits_hit() == ["memory", "pids"]
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 1\noom_kill 0\n")
    assert group.limits_hit() == ["pids"]


def test_v2_counters_name_the_limits_the_kernel_enforced(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    events = group.dirs["unified"] / "memory.events"
    assert group.limits_hit() == []
    events.write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 0\n")  # pressure, but nothing killed
    assert group.limits_hit() == []
    events.write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 2\n")
    assert group.limits_hit() == ["memory"]
    (group.dirs["unified"] / "pids.events").write_text("max 1\n")
    assert group.limits_hit() == ["memory", "pids"]


def test_v2_counters_a_kernel_does_not_keep_read_as_nothing_hit(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\n")  # before Linux 4.13
    (group.dirs["unified"] / "pids.events").unlink()
    assert group.limits_hit() == []


def test_counters_of_a_removed_group_read_as_nothing_hit(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.remove()
    assert group.limits_hit() == []
    assert group.cpu_seconds_used() == 0.0


def test_v1_cpu_time_is_cpuacct_usage_in_nanoseconds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    assert group.cpu_seconds_used() == 0.0
    (group.dirs["cpuacct"] / "cpuacct.usage").write_text("2500000000\n")
    assert group.cpu_seconds_used() == 2.5


def test_v2_cpu_time_is_cpu_stat_usage_in_microseconds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    assert group.cpu_seconds_used() == 0.0
    (group.dirs["unified"] / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert group.cpu_seconds_used() == 1.5
    (group.dirs["unified"] / "cpu.stat").write_text("user_usec 1000000\n")
    assert group.cpu_seconds_used() == 0.0


def test_the_cpu_budget_is_passed_strictly_and_stays_passed(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)  # 2.0 CPU seconds
    usage = group.dirs["cpuacct"] / "cpuacct.usage"
    usage.write_text("2000000000\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (False, [])
    usage.write_text("2000000001\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (True, ["cpu"])
    usage.write_text("0\n")
    assert (group.over_cpu_budget(), group.limits_hit()) == (True, ["cpu"])
    (group.dirs["memory"] / "memory.oom_control").write_text("oom_kill 1\n")
    (group.dirs["pids"] / "pids.events").write_text("max 1\n")
    assert group.limits_hit() == ["memory", "pids", "cpu"]


def test_remove_takes_every_directory_away(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.remove()
    assert not any(path.exists() for path in group.dirs.values())
    group.remove()  # twice is harmless


def test_remove_waits_out_a_busy_directory(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    path = group.dirs["unified"]
    fs.busy[path] = 3
    sleeps: list[float] = []
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=sleeps.append))
    group.remove()
    assert not path.exists()
    assert (fs.rmdirs, sleeps) == ([path] * 4, [0.01] * 3)


def test_remove_goes_on_past_a_directory_already_gone(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    group.dirs["memory"].rmdir()
    group.remove()
    assert not any(path.exists() for path in group.dirs.values())


def test_remove_gives_up_on_a_directory_that_stays_busy(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v1_group(fs, monkeypatch)
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=lambda seconds: None))
    fs.busy[group.dirs["memory"]] = 1000
    group.remove()
    assert fs.rmdirs.count(group.dirs["memory"]) == 100
    assert group.dirs["memory"].exists()
    assert not any(group.dirs[c].exists() for c in ("pids", "cpu", "cpuacct"))


def test_kill_all_kills_every_listed_process(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    procs = group.dirs["unified"] / "cgroup.procs"
    procs.write_text("".join(f"{p.pid}\n" for p in sleepers))
    rounds = []

    def kernel_reaps(seconds: float) -> None:  # the kernel drops dead processes from cgroup.procs
        rounds.append(seconds)
        for sleeper in sleepers:
            sleeper.wait(timeout=30)
        procs.write_text("")

    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=kernel_reaps))
    cgroups.kill_all(group.dirs["unified"])
    assert [sleeper.returncode for sleeper in sleepers] == [-9, -9]
    assert rounds == [0.02]


def test_kill_all_passes_over_a_process_it_may_not_signal(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "cgroup.procs").write_text("4242\n")

    def refuse(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(cgroups, "os", SimpleNamespace(kill=refuse))
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=lambda seconds: None))
    cgroups.kill_all(group.dirs["unified"])


def test_kill_all_gives_up_after_fifty_rounds(fs: FakeCgroupfs, monkeypatch: MonkeyPatch) -> None:
    group = v2_group(fs, monkeypatch)
    (group.dirs["unified"] / "cgroup.procs").write_text("999999999\n")  # no such process, never leaves
    rounds = []
    monkeypatch.setattr(cgroups, "time", SimpleNamespace(sleep=rounds.append))
    cgroups.kill_all(group.dirs["unified"])
    assert rounds == [0.02] * 50


def test_keyed_reads_key_value_lines_with_integer_values(tmp_path: Path) -> None:
    path = tmp_path / "memory.events"
    path.write_text("oom_kill_disable 0\nunder_oom 1\noom_kill 12\nmax max\nthree fields 3\n\nquota -1\nlonely\n")
    path.write_text(path.read_text() + "unlimited X1\n")
    assert _keyed(path) == {"oom_kill_disable": 0, "under_oom": 1, "oom_kill": 12, "quota": -1}
    assert _keyed(tmp_path / "absent") == {}


def test_read_and_pids_of_absent_or_odd_files(tmp_path: Path) -> None:
    path = tmp_path / "cgroup.procs"
    path.write_text("12\n345\n\nx\n")
    assert _pids(path) == [12, 345]
    assert _read(path) == "12\n345\n\nx\n"
    assert _read(tmp_path / "absent") == ""
    assert _pids(tmp_path / "absent") == []
