"""Specification of stages/sandbox/command.py: each part of a sandboxed run's command line."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch

from stages.sandbox import command
from stages.sandbox.command import (
    ENTER_CGROUPS,
    Identity,
    enter_cgroups,
    environment,
    namespace_args,
    privilege_drop,
    rlimit_prefix,
    sandbox_identity,
)

ROOT_HARNESS = Identity(65534, 65534, as_root=True)
USER_HARNESS = Identity(1000, 1001, as_root=False)
INFINITY = resource.RLIM_INFINITY


def test_a_root_harness_runs_the_program_as_nobody(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(command, "os", SimpleNamespace(geteuid=lambda: 0, getegid=lambda: 0))
    assert sandbox_identity() == Identity(65534, 65534, as_root=True)


def test_another_harness_runs_the_program_as_itself(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(command, "os", SimpleNamespace(geteuid=lambda: 1000, getegid=lambda: 1001))
    assert sandbox_identity() == Identity(1000, 1001, as_root=False)


def test_environment_is_the_whitelist_with_the_runtime_bins_first(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    venv, base, bare = tmp_path / "venv", tmp_path / "base", tmp_path / "bare"
    for path in (venv / "bin", base / "bin", bare):
        path.mkdir(parents=True)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    monkeypatch.setenv("SCIBENCH_SECRET", "1")
    # A prefix (its bin/ is used), an executable directory named bin, a duplicate, one without bin/.
    env = environment([venv, base / "bin", venv / "bin", bare], "/workspace/work", None)
    assert env == {
        "PATH": f"{venv}/bin:{base}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/workspace/work",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": "/workspace/work/.mpl",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
        "OPENBLAS_CORETYPE": "Haswell",
    }


def test_environment_passes_both_openblas_settings_and_lets_extra_override(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "1048576")
    env = environment([], "/w", {"HOME": "/elsewhere", "SCIBENCH_RUN": "r1"})
    assert env == {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/elsewhere",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": "/w/.mpl",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
        "OPENBLAS_CORETYPE": "Haswell",
        "OPENBLAS_L2_SIZE": "1048576",
        "SCIBENCH_RUN": "r1",
    }


def test_environment_without_openblas_settings_has_none(monkeypatch: MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    assert sorted(environment([], "/w", {})) == [
        "HOME", "LANG", "MKL_NUM_THREADS", "MPLCONFIGDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PATH",
        "PYTHONDONTWRITEBYTECODE"]


def test_a_root_harness_keeps_only_the_capabilities_setpriv_needs() -> None:
    assert namespace_args(ROOT_HARNESS, 7, 9) == [
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox", "--seccomp", "7", "--info-fd", "9",
        "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
        "--die-with-parent", "--new-session", "--chdir", "/workspace",
    ]


def test_another_harness_gets_a_user_namespace_that_cannot_nest() -> None:
    assert namespace_args(USER_HARNESS, 11, 4) == [
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox", "--seccomp", "11", "--info-fd", "4",
        "--unshare-user", "--disable-userns",
        "--die-with-parent", "--new-session", "--chdir", "/workspace",
    ]


def test_privilege_drop_under_a_root_harness() -> None:
    assert privilege_drop(Identity(65534, 65533, as_root=True)) == [
        "setpriv", "--reuid=65534", "--regid=65533", "--clear-groups", "--no-new-privs", "--inh-caps=-all",
        "--bounding-set=-all", "--pdeathsig=KILL",
    ]


def test_no_privilege_drop_under_another_harness() -> None:
    assert privilege_drop(USER_HARNESS) == []


def fake_limits(monkeypatch: MonkeyPatch, hard: dict[int, int]) -> list[int]:
    """Current limits: `hard` per kind (soft alike), unlimited otherwise; returns the kinds asked."""
    asked: list[int] = []

    def getrlimit(kind: int) -> tuple[int, int]:
        asked.append(kind)
        return hard.get(kind, INFINITY), hard.get(kind, INFINITY)

    fake = SimpleNamespace(**{name: getattr(resource, name) for name in dir(resource) if name.startswith("RLIM")})
    monkeypatch.setattr(command, "resource", SimpleNamespace(**vars(fake), getrlimit=getrlimit))
    monkeypatch.setattr(command, "shutil", SimpleNamespace(which={"prlimit": "/usr/bin/prlimit"}.get))
    return asked


def test_rlimits_are_soft_hard_pairs_with_a_cpu_second_of_grace(monkeypatch: MonkeyPatch) -> None:
    asked = fake_limits(monkeypatch, {})
    assert rlimit_prefix(60, 2 << 30, 1 << 20, None) == [
        "/usr/bin/prlimit", "--cpu=60:61", f"--as={2 << 30}:{2 << 30}", f"--fsize={1 << 20}:{1 << 20}",
        "--core=0:0", "--"]
    assert asked == [resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE]


def test_rlimits_bind_processes_only_without_a_cgroup(monkeypatch: MonkeyPatch) -> None:
    fake_limits(monkeypatch, {})
    assert rlimit_prefix(1, 100, 200, 16) == [
        "/usr/bin/prlimit", "--cpu=1:2", "--as=100:100", "--fsize=200:200", "--core=0:0", "--nproc=16:16", "--"]
    assert rlimit_prefix(1, 100, 200, 0)[-2:] == ["--nproc=0:0", "--"]


def test_rlimits_are_capped_at_the_current_hard_limits(monkeypatch: MonkeyPatch) -> None:
    fake_limits(monkeypatch, {resource.RLIMIT_CPU: 60, resource.RLIMIT_AS: 1000, resource.RLIMIT_FSIZE: 4096,
                              resource.RLIMIT_CORE: 0, resource.RLIMIT_NPROC: 8})
    assert rlimit_prefix(60, 5000, 4096, 512) == [
        "/usr/bin/prlimit", "--cpu=60:60", "--as=1000:1000", "--fsize=4096:4096", "--core=0:0", "--nproc=8:8", "--"]
    assert rlimit_prefix(100, 500, 10, 4)[1:-1] == ["--cpu=60:60", "--as=500:500", "--fsize=10:10", "--core=0:0",
                                                     "--nproc=4:4"]
    assert rlimit_prefix(30, 500, 10, 4)[1] == "--cpu=30:31"


def test_a_core_limit_above_zero_is_still_zero(monkeypatch: MonkeyPatch) -> None:
    fake_limits(monkeypatch, {resource.RLIMIT_CORE: 1 << 20})
    assert rlimit_prefix(1, 2, 3, None)[4] == "--core=0:0"


def test_prlimit_is_named_bare_when_it_is_not_on_path(monkeypatch: MonkeyPatch) -> None:
    fake_limits(monkeypatch, {})
    monkeypatch.setattr(command, "shutil", SimpleNamespace(which=lambda name: None))
    assert rlimit_prefix(1, 2, 3, None)[0] == "prlimit"


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) is not installed")
def test_the_prefix_sets_the_limits_of_the_command_it_runs() -> None:
    code = ("import resource as r; print([r.getrlimit(k) for k in "
            "(r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_CORE, r.RLIMIT_NPROC)])")
    argv = rlimit_prefix(50, 4 << 30, 8 << 20, 300) + [sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)

    def capped(kind: int, soft: int, hard: int) -> tuple[int, int]:
        ceiling = resource.getrlimit(kind)[1]
        return (soft, hard) if ceiling == INFINITY else (min(soft, ceiling), min(hard, ceiling))

    expected = [capped(resource.RLIMIT_CPU, 50, 51), capped(resource.RLIMIT_AS, 4 << 30, 4 << 30),
                capped(resource.RLIMIT_FSIZE, 8 << 20, 8 << 20), (0, 0), capped(resource.RLIMIT_NPROC, 300, 300)]
    assert done.stdout == f"{expected}\n", done.stderr


def test_no_cgroup_means_no_prefix() -> None:
    assert enter_cgroups([]) == []


def test_enter_cgroups_names_each_procs_file_then_the_command() -> None:
    files = [Path("/sys/fs/cgroup/memory/g/cgroup.procs"), Path("/sys/fs/cgroup/pids/g/cgroup.procs")]
    assert enter_cgroups(files) == [*ENTER_CGROUPS, "/sys/fs/cgroup/memory/g/cgroup.procs",
                                    "/sys/fs/cgroup/pids/g/cgroup.procs", "--"]


def test_the_cgroup_prefix_writes_itself_into_each_file_then_runs_the_command(tmp_path: Path) -> None:
    first, second = tmp_path / "a.procs", tmp_path / "b.procs"
    done = subprocess.run([*enter_cgroups([first, second]), "echo", "ran", "--", "x"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "ran -- x\n")
    assert (first.read_text(), second.read_text()) == ("0\n", "0\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.procs", "b.procs"]  # nothing else written


def test_the_cgroup_prefix_stops_before_the_command_when_a_file_refuses(tmp_path: Path) -> None:
    (tmp_path / "refusing").mkdir()
    done = subprocess.run([*enter_cgroups([tmp_path / "refusing"]), "echo", "ran"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (125, "")


def test_identity_of_this_process() -> None:
    expected = (Identity(65534, 65534, True) if os.geteuid() == 0
                else Identity(os.geteuid(), os.getegid(), False))
    assert sandbox_identity() == expected
