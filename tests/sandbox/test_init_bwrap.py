"""Specification of stages/sandbox/__init__.py: how a bwrap run is put together and reported.

Short runs print what they see inside (identity, limits, environment, tmpfs sizes), with a per-run
cgroup and without one; a finished run reports its status, output and files (answer.json up to a
mebibyte by default); a signal, SIGXFSZ, a setup failure and a command that cannot start each end as
they should, leaving no descriptor or cgroup behind; a harness that is not root makes no cgroup; and
each descriptor bwrap reads is named for what it holds. Each run takes a fraction of a second; the
slower contract tests are in test_run_*.py.
"""

from __future__ import annotations

import json
import os
import resource
import textwrap
import time
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from sandbox.init_helpers import AS_ROOT, PY, empty_workspace, in_thread, needs_bwrap, open_fds
from scibench_testing.limits import limits_with

from stages import sandbox
from stages.sandbox import Collected, RunResult, cgroups, run_sandboxed
from stages.sandbox.command import environment
from stages.sandbox.filesystem import python_runtime_paths
from stages.sandbox.untrusted import MISSING


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return empty_workspace(tmp_path / "ws")


# --- runs in bwrap ---

INSPECT = textwrap.dedent("""
    import json, os, resource
    def size(path):
        info = os.statvfs(path)
        return info.f_blocks * info.f_frsize
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    kinds = ("CPU", "AS", "FSIZE", "CORE", "NPROC")
    print(json.dumps({
        "ids": [os.getuid(), os.getgid()],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "sizes": [size("/workspace/work"), size("/tmp"), size("/dev/shm")],
        "rlimits": [list(resource.getrlimit(getattr(resource, "RLIMIT_" + k))) for k in kinds],
        "seccomp": status["Seccomp"].strip(),
        "no_new_privs": status["NoNewPrivs"].strip(),
        "hostname": os.uname().nodename,
        "passwd": open("/etc/passwd").read().splitlines()[1],
        "pid": os.getpid(),
    }))
""")
INSPECT_LIMITS = limits_with(wall_seconds=60, cpu_seconds=7, memory_bytes=300 << 20, address_space_bytes=3 << 30,
                        file_size_bytes=5 << 20, processes=40, cpu_cores=0.75, work_bytes=1 << 20,
                        tmp_bytes=2 << 20, shm_bytes=3 << 20)


def capped(kind: int, soft: int, hard: int) -> list[int]:
    ceiling = resource.getrlimit(kind)[1]
    return [soft, hard] if ceiling == resource.RLIM_INFINITY else [min(soft, ceiling), min(hard, ceiling)]


@pytest.fixture
def groups_made(monkeypatch: MonkeyPatch) -> list[tuple[cgroups.Totals, cgroups.Cgroup | None]]:
    """Each cgroup the runs ask for, with what was made."""
    made = []
    real = cgroups.create

    def create(totals: cgroups.Totals, root: Path = cgroups.ROOT) -> cgroups.Cgroup | None:
        made.append((totals, real(totals, root)))
        return made[-1][1]

    monkeypatch.setattr(cgroups, "create", create)
    return made


@needs_bwrap
def test_a_run_is_who_and_where_its_limits_say(ws: Path, groups_made: list) -> None:
    before = open_fds()
    result = run_sandboxed(ws, [PY, "-c", INSPECT], limits=INSPECT_LIMITS, extra_env={"SCIBENCH_RUN": "r1"})
    assert (result.exit_code, result.stderr, result.infra_error, result.limits_hit) == (0, "", None, ())
    inside = json.loads(result.stdout)
    group = groups_made[0][1] if groups_made else None
    if AS_ROOT:
        assert [totals for totals, _ in groups_made] == [cgroups.Totals(300 << 20, 40, 0.75, 7)]
        assert group is not None, "no cgroup could be made here"
        assert not any(path.exists() for path in group.dirs.values())
        assert result.isolation == f"bwrap, uid 65534, cgroup v{group.version}"
        assert inside["ids"] == [65534, 65534]
        cpu, nproc = [8, 9], capped(resource.RLIMIT_NPROC, *resource.getrlimit(resource.RLIMIT_NPROC))
    else:
        assert groups_made == []
        assert result.isolation == f"bwrap, uid {os.geteuid()}, no cgroup: per-process rlimits only"
        assert inside["ids"] == [os.geteuid(), os.getegid()]
        cpu, nproc = [7, 8], capped(resource.RLIMIT_NPROC, 40, 40)
    assert inside["rlimits"] == [capped(resource.RLIMIT_CPU, *cpu), capped(resource.RLIMIT_AS, 3 << 30, 3 << 30),
                                 capped(resource.RLIMIT_FSIZE, 5 << 20, 5 << 20), [0, 0], nproc]
    assert inside["sizes"] == [1 << 20, 2 << 20, 3 << 20]
    assert (inside["cwd"], inside["seccomp"], inside["no_new_privs"], inside["hostname"]) == (
        "/workspace", "2", "1", "sandbox")
    assert inside["passwd"] == f"agent:x:{inside['ids'][0]}:{inside['ids'][1]}::/workspace/work:/bin/sh"
    assert inside["pid"] == 3  # bwrap's init is 1, the launcher 2
    env = inside["env"]
    # The runtime's bin directories, then the system's (the order is test_command.py's to pin).
    assert env.pop("PATH") == environment(python_runtime_paths(), "/workspace/work", None)["PATH"]
    assert {k: v for k, v in env.items() if not k.startswith("OPENBLAS_C") and k != "OPENBLAS_L2_SIZE"} == {
        "HOME": "/workspace/work", "PYTHONDONTWRITEBYTECODE": "1", "MPLCONFIGDIR": "/workspace/work/.mpl",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LANG": "C.UTF-8",
        "SCIBENCH_RUN": "r1", "PWD": "/workspace"}
    assert open_fds() == before


@needs_bwrap
def test_a_run_without_a_cgroup_binds_each_process_instead(ws: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "create", lambda totals, root=cgroups.ROOT: None)
    result = run_sandboxed(ws, [PY, "-c", INSPECT], limits=INSPECT_LIMITS)
    assert result.isolation == f"bwrap, uid {65534 if AS_ROOT else os.geteuid()}, no cgroup: per-process rlimits only"
    assert json.loads(result.stdout)["rlimits"][0] == capped(resource.RLIMIT_CPU, 7, 8)
    assert json.loads(result.stdout)["rlimits"][4] == capped(resource.RLIMIT_NPROC, 40, 40)


@needs_bwrap
def test_a_finished_run_reports_its_status_output_and_files(ws: Path) -> None:
    script = ("echo out; echo err >&2; printf '{\"mean\": 1.5}' > work/answer.json; printf 12345 > work/big; "
              "ln -s /etc/passwd work/link; exit 3")
    begun = time.monotonic()
    # A run that does not end when its program does (a pipe left open) fails here, not at the wall clock.
    _, results = in_thread(lambda: run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits_with(wall_seconds=60),
                                                 collect_files=("answer.json", "big", "link", "absent"),
                                                 collect_bytes=14))
    took = time.monotonic() - begun
    assert results, "the run did not end within 30 s of its program"
    result = results[0]
    assert result == RunResult(
        exit_code=3, timed_out=False, wall_seconds=result.wall_seconds, stdout="out\n", stderr="err\n",
        infra_error=None, limits_hit=(), isolation=result.isolation,
        files={"answer.json": Collected(b'{"mean": 1.5}', None), "big": Collected(b"12345", None),
               "link": Collected(None, "cannot open link: Too many levels of symbolic links"), "absent": MISSING})
    assert result.files["answer.json"].owner_uid == (65534 if AS_ROOT else os.geteuid())
    assert 0 < result.wall_seconds <= took


@needs_bwrap
def test_the_default_is_to_collect_answer_json_up_to_a_mebibyte(ws: Path) -> None:
    script = "head -c 1048576 /dev/zero > work/answer.json; head -c 1048577 /dev/zero > work/other.json"
    result = run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits_with(wall_seconds=60))
    assert result.files == {"answer.json": Collected(bytes(1 << 20), None)}
    big = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 1048577 /dev/zero > work/answer.json"],
                        limits=limits_with(wall_seconds=60))
    assert big.files == {"answer.json": Collected(None, "answer.json is larger than 1048576 bytes")}


@needs_bwrap
def test_a_program_killed_by_a_signal_exits_with_128_plus_it(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "kill -SEGV $$"], limits=limits_with(wall_seconds=60))
    assert (result.exit_code, result.limits_hit, result.infra_error) == (128 + 11, (), None)


@needs_bwrap
def test_a_program_killed_by_sigxfsz_names_the_file_size_limit(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 200000 /dev/zero > work/f"],
                           limits=limits_with(wall_seconds=60, file_size_bytes=100_000))
    assert (result.exit_code, result.limits_hit) == (128 + 25, ("file_size",))


@needs_bwrap
def test_a_setup_failure_is_an_infra_error(ws: Path, tmp_path: Path, groups_made: list) -> None:
    before = open_fds()
    # It ends when bwrap does, not at the wall clock (no pipe of the harness's is left open).
    _, results = in_thread(lambda: run_sandboxed(ws, ["true"], limits=limits_with(wall_seconds=60),
                                                 agent_dir=tmp_path / "missing"))
    assert results, "the run did not end within 30 s of bwrap's failure"
    result = results[0]
    assert (result.exit_code, result.timed_out, result.stdout, result.limits_hit) == (1, False, "", ())
    assert result.infra_error == f"bwrap: Can't find source path {tmp_path / 'missing'}: No such file or directory"
    assert result.files == {}  # nothing ran, nothing is collected
    assert not any(path.exists() for _, group in groups_made if group for path in group.dirs.values())
    assert open_fds() == before


@needs_bwrap
def test_a_command_that_cannot_start_is_an_infra_error(ws: Path, monkeypatch: MonkeyPatch, groups_made: list) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "prlimit")

    monkeypatch.setattr(sandbox.subprocess, "Popen", refuse)
    before = open_fds()
    begun = time.monotonic()
    result = run_sandboxed(ws, ["true"], limits=limits_with(wall_seconds=60))
    assert result == RunResult(None, False, result.wall_seconds, "", "",
                               "cannot start: [Errno 2] No such file or directory: 'prlimit'")
    assert 0 <= result.wall_seconds <= time.monotonic() - begun
    assert open_fds() == before
    assert not any(path.exists() for _, group in groups_made if group for path in group.dirs.values())


def test_a_harness_that_is_not_root_makes_no_cgroup(ws: Path, monkeypatch: MonkeyPatch, groups_made: list) -> None:
    monkeypatch.setattr(sandbox.command, "sandbox_identity", lambda: sandbox.command.Identity(1000, 1000, False))

    def refuse(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "prlimit")

    monkeypatch.setattr(sandbox.subprocess, "Popen", refuse)
    run_sandboxed(ws, ["true"], limits=limits_with(wall_seconds=60))
    assert groups_made == []


@needs_bwrap
def test_each_descriptor_bwrap_reads_is_named_for_what_it_holds(ws: Path, monkeypatch: MonkeyPatch) -> None:
    # As /proc/<pid>/fd of bwrap shows them while it sets up: memfd:scibench-<name>.
    names = []
    real = sandbox._memfd
    monkeypatch.setattr(sandbox, "_memfd", lambda name, data: names.append(name) or real(name, data))
    assert run_sandboxed(ws, ["true"], limits=limits_with(wall_seconds=60)).exit_code == 0
    assert names == ["seccomp", "passwd", "group", "hosts", "hostname"]
