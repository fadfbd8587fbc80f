"""Specification of stages/sandbox/__init__.py: how one run is put together and reported.

The pure parts (`_result`, `harvest_work`, `_full_tmpfs`, the dispatch of `run_sandboxed`) are tested
directly; the assembly of a bwrap run is tested by short runs that print what they see inside
(identity, limits, environment, tmpfs sizes) and by one run per way a run ends. Each run takes a
fraction of a second; the slower contract tests are in test_run.py.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch
from scibench_testing.processes import running_with_arg

from stages import sandbox
from stages.sandbox import (
    Collected,
    Limits,
    RunResult,
    SandboxUnavailable,
    _close,
    _full_tmpfs,
    _memfd,
    _result,
    cgroups,
    harvest_work,
    run_sandboxed,
)
from stages.sandbox.command import environment
from stages.sandbox.filesystem import python_runtime_paths
from stages.sandbox.process import Tail, Watch
from stages.sandbox.untrusted import MISSING

PY = sys.executable
AS_ROOT = os.geteuid() == 0
needs_bwrap = pytest.mark.skipif(not sandbox.bwrap_available(), reason="bubblewrap is not installed")
needs_cgroup = pytest.mark.skipif(not AS_ROOT, reason="per-run cgroups are made for a root harness only")


def open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


# --- _result: from what the harness saw to a RunResult ---


def seen(started: bool = True, done: int | None = None, stop: str | None = None, out: bytes = b"",
         err: bytes = b"") -> Watch:
    state = Watch(started=started, done_status=done, stop_reason=stop, stdout=Tail(), stderr=Tail())
    state.stdout.add(out)
    state.stderr.add(err)
    return state


def test_a_reported_status_is_the_exit_code() -> None:
    result = _result(seen(done=3, out=b"out", err=b"err"), -9, 1.5, {"a": MISSING}, [], "how")
    assert result == RunResult(3, False, 1.5, "out", "err", None, (), {"a": MISSING}, "how")


def test_without_a_report_the_process_status_is_the_exit_code() -> None:
    assert _result(seen(), 4, 0.1, {}, [], "").exit_code == 4
    assert _result(seen(), 0, 0.1, {}, [], "").exit_code == 0
    assert _result(seen(), -11, 0.1, {}, [], "").exit_code == 128 + 11


def test_a_stopped_run_has_no_exit_code_and_names_the_stop() -> None:
    assert _result(seen(done=143, stop="wall"), -9, 2.0, {}, [], "") == RunResult(
        None, True, 2.0, "", "", None, ("wall",), {}, "")
    assert _result(seen(stop="output"), -9, 2.0, {}, ["memory"], "") == RunResult(
        None, False, 2.0, "", "", None, ("output", "memory"), {}, "")


def test_a_run_that_never_started_is_an_infra_error_in_its_own_words() -> None:
    assert _result(seen(started=False, err=b"  bwrap: no\n"), 1, 0.1, {}, [], "").infra_error == "bwrap: no"
    assert _result(seen(started=False, err=b" \n"), 1, 0.1, {}, [], "").infra_error == (
        "sandbox setup exited with 1")
    assert _result(seen(started=False), -9, 0.1, {}, [], "").infra_error == "sandbox setup exited with -9"
    assert _result(seen(started=True, err=b"bwrap: faked"), 1, 0.1, {}, [], "").infra_error is None


@pytest.mark.parametrize(("status", "limit"), [(128 + 24, "cpu"), (128 + 25, "file_size")])
def test_death_by_an_rlimit_signal_names_the_limit(status: int, limit: str) -> None:
    assert _result(seen(done=status), 0, 0.1, {}, [], "").limits_hit == (limit,)
    assert _result(seen(), 128 - status, 0.1, {}, [], "").limits_hit == (limit,)  # killed, no report
    assert _result(seen(done=status), 0, 0.1, {}, ["cpu", "disk:tmp"], "").limits_hit == tuple(
        dict.fromkeys(["cpu", "disk:tmp", limit]))


def test_other_signals_name_no_limit() -> None:
    assert _result(seen(done=128 + 9), 0, 0.1, {}, [], "").limits_hit == ()
    assert _result(seen(done=24), 0, 0.1, {}, [], "").limits_hit == ()


def test_limits_are_named_once_in_order() -> None:
    result = _result(seen(stop="cpu"), -9, 1.0, {}, ["memory", "cpu", "pids", "memory"], "")
    assert result.limits_hit == ("cpu", "memory", "pids")


def test_the_output_is_the_decoded_tail() -> None:
    result = _result(seen(done=0, out=b"a" * 30_000 + b"\xff", err="é".encode()), 0, 0.1, {}, [], "")
    assert (result.stdout, result.stderr) == ("a" * 19_999 + "\ufffd", "é")


# --- harvest_work, _full_tmpfs, _memfd, _close ---


def test_harvest_collects_each_name_from_work(tmp_path: Path) -> None:
    (tmp_path / "answer.json").write_bytes(b"{}")
    (tmp_path / "big").write_bytes(b"12345")
    before = open_fds()
    assert harvest_work(str(tmp_path), ["answer.json", "big", "absent"], 4) == {
        "answer.json": Collected(b"{}", None), "big": Collected(None, "big is larger than 4 bytes"),
        "absent": MISSING}
    assert open_fds() == before


def test_harvest_of_an_unreadable_work_names_the_problem_for_each_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert harvest_work(str(tmp_path / "gone"), ["a", "b"], 10) == {
        "a": Collected(None, "work/ unreadable: No such file or directory"),
        "b": Collected(None, "work/ unreadable: No such file or directory")}
    assert harvest_work(str(tmp_path / "file"), ["a"], 10) == {
        "a": Collected(None, "work/ unreadable: Not a directory")}


def test_full_tmpfs_are_those_with_less_than_64_kib_free(monkeypatch: MonkeyPatch) -> None:
    free = {"/r/workspace/work": (15, 4096), "/r/tmp": (16, 4096), "/r/dev/shm": (0, 1024)}
    asked = []

    def statvfs(path: str) -> SimpleNamespace:
        asked.append(path)
        return SimpleNamespace(f_bavail=free[path][0], f_frsize=free[path][1])

    monkeypatch.setattr(sandbox.os, "statvfs", statvfs)
    assert _full_tmpfs("/r") == ["disk:work", "disk:shm"]
    assert asked == ["/r/workspace/work", "/r/tmp", "/r/dev/shm"]
    free.update({"/r/workspace/work": (16, 4096), "/r/dev/shm": (63, 1024), "/r/tmp": (1, 65535)})
    assert _full_tmpfs("/r") == ["disk:tmp", "disk:shm"]


def test_full_tmpfs_skips_what_cannot_be_looked_at(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    assert _full_tmpfs(str(tmp_path)) == []
    assert _full_tmpfs(str(tmp_path / "gone")) == []


def test_memfd_holds_the_data_from_its_start_under_a_scibench_name() -> None:
    fd = _memfd("seccomp", b"\x01\x02data")
    try:
        assert os.read(fd, 100) == b"\x01\x02data"
        assert os.readlink(f"/proc/self/fd/{fd}") == "/memfd:scibench-seccomp (deleted)"
    finally:
        os.close(fd)


def test_close_closes_each_and_ignores_those_already_closed() -> None:
    a, b = os.pipe()
    os.close(a)
    _close(a, b, b)
    with pytest.raises(OSError):
        os.fstat(b)


# --- run_sandboxed: which path a run takes ---


def test_bwrap_is_looked_up_on_path(monkeypatch: MonkeyPatch) -> None:
    asked = []
    monkeypatch.setattr(sandbox, "shutil", SimpleNamespace(which=lambda name: asked.append(name) or None))
    assert not sandbox.bwrap_available()
    monkeypatch.setattr(sandbox, "shutil", SimpleNamespace(which=lambda name: asked.append(name) or "/x/bwrap"))
    assert sandbox.bwrap_available()
    assert asked == ["bwrap", "bwrap"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text("Report the mean of x.\n")
    return root


def test_without_bwrap_a_run_is_refused_unless_allowed(ws: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
    with pytest.raises(SandboxUnavailable) as raised:
        run_sandboxed(ws, ["true"], limits=Limits())
    assert str(raised.value) == (
        "bubblewrap (bwrap) is not installed: install it with `apt-get install -y bubblewrap`, "
        "or allow an unsandboxed run explicitly (--unsafe-no-sandbox)")


def test_an_allowed_unsandboxed_run_is_logged_and_passed_on(
    ws: Path, tmp_path: Path, monkeypatch: MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import stages.sandbox.unsandboxed as unsandboxed

    calls = []
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)
    monkeypatch.setattr(unsandboxed, "run_unsandboxed", lambda *args: calls.append(args) or "result")
    (tmp_path / "link").symlink_to(ws)
    limits = Limits(wall_seconds=5)
    with caplog.at_level(logging.WARNING, logger="stages.sandbox"):
        assert run_sandboxed(tmp_path / "link", ["prog", "arg"], limits=limits, extra_env={"A": "1"},
                             collect_files=("x",), collect_bytes=5, unsafe_no_sandbox=True) == "result"
        assert run_sandboxed(ws, ["prog"], limits=limits, unsafe_no_sandbox=True) == "result"
    assert calls == [(ws, ["prog", "arg"], limits, {"A": "1"}, ("x",), 5, {}),
                     (ws, ["prog"], limits, None, ("answer.json",), 1 << 20, {})]
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("stages.sandbox", "WARNING", f"bwrap unavailable: running ['prog', 'arg'] UNSANDBOXED in {ws}"),
        ("stages.sandbox", "WARNING", f"bwrap unavailable: running ['prog'] UNSANDBOXED in {ws}")]


def test_with_bwrap_the_run_goes_into_the_sandbox(ws: Path, tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: True)
    monkeypatch.setattr(sandbox, "_run_in_bwrap", lambda *args: calls.append(args) or "result")
    (tmp_path / "link").symlink_to(ws)
    limits = Limits(wall_seconds=5)
    assert run_sandboxed(tmp_path / "link", ["prog"], limits=limits, agent_dir=tmp_path, hidden=(tmp_path,),
                         extra_env={"A": "1"}, collect_files=("x",), collect_bytes=5,
                         unsafe_no_sandbox=True) == "result"
    assert run_sandboxed(ws, ["prog"], limits=limits) == "result"
    assert calls == [(ws, ["prog"], limits, tmp_path, [tmp_path], {"A": "1"}, ("x",), 5, {}),
                     (ws, ["prog"], limits, None, [], None, ("answer.json",), 1 << 20, {})]


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
INSPECT_LIMITS = Limits(wall_seconds=60, cpu_seconds=7, memory_bytes=300 << 20, address_space_bytes=3 << 30,
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
    _, results = in_thread(lambda: run_sandboxed(ws, ["/bin/sh", "-c", script], limits=Limits(wall_seconds=60),
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
    result = run_sandboxed(ws, ["/bin/sh", "-c", script], limits=Limits(wall_seconds=60))
    assert result.files == {"answer.json": Collected(bytes(1 << 20), None)}
    big = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 1048577 /dev/zero > work/answer.json"],
                        limits=Limits(wall_seconds=60))
    assert big.files == {"answer.json": Collected(None, "answer.json is larger than 1048576 bytes")}


@needs_bwrap
def test_a_program_killed_by_a_signal_exits_with_128_plus_it(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "kill -SEGV $$"], limits=Limits(wall_seconds=60))
    assert (result.exit_code, result.limits_hit, result.infra_error) == (128 + 11, (), None)


@needs_bwrap
def test_a_program_killed_by_sigxfsz_names_the_file_size_limit(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 200000 /dev/zero > work/f"],
                           limits=Limits(wall_seconds=60, file_size_bytes=100_000))
    assert (result.exit_code, result.limits_hit) == (128 + 25, ("file_size",))


@needs_bwrap
def test_a_setup_failure_is_an_infra_error(ws: Path, tmp_path: Path, groups_made: list) -> None:
    before = open_fds()
    # It ends when bwrap does, not at the wall clock (no pipe of the harness's is left open).
    _, results = in_thread(lambda: run_sandboxed(ws, ["true"], limits=Limits(wall_seconds=60),
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
    result = run_sandboxed(ws, ["true"], limits=Limits(wall_seconds=60))
    assert result == RunResult(None, False, result.wall_seconds, "", "",
                               "cannot start: [Errno 2] No such file or directory: 'prlimit'")
    assert 0 <= result.wall_seconds <= time.monotonic() - begun
    assert open_fds() == before
    assert not any(path.exists() for _, group in groups_made if group for path in group.dirs.values())




@needs_bwrap
def test_the_wall_clock_stops_the_run_and_still_collects_its_answer(ws: Path) -> None:
    token = uuid.uuid4().hex
    script = f"echo started; printf 1 > work/answer.json; sleep 60 & exec {PY} -c 'import time; time.sleep(60)' {token}"
    result = run_sandboxed(ws, ["/bin/sh", "-c", script], limits=Limits(wall_seconds=0.5))
    assert (result.exit_code, result.timed_out, result.limits_hit, result.stdout) == (None, True, ("wall",),
                                                                                       "started\n")
    assert result.files == {"answer.json": Collected(b"1", None)}
    assert result.wall_seconds >= 0.5
    assert running_with_arg(token) == []


@needs_bwrap
def test_output_past_the_cap_stops_the_run(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; sleep 60"],
                           limits=Limits(wall_seconds=60, output_bytes=100_000))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("output",))
    assert result.stdout == "a" * 20_000


@needs_bwrap
def test_full_tmpfs_mounts_are_named(ws: Path) -> None:
    script = ("head -c 1000000 /dev/zero > work/f; head -c 1000000 /dev/zero > /tmp/f; "
              "head -c 1000000 /dev/zero > /dev/shm/f; exit 0")
    limits = Limits(wall_seconds=60, work_bytes=256 << 10, tmp_bytes=512 << 10, shm_bytes=256 << 10)
    assert run_sandboxed(ws, ["/bin/sh", "-c", script], limits=limits).limits_hit == (
        "disk:work", "disk:tmp", "disk:shm")
    only_tmp = "head -c 1000000 /dev/zero > /tmp/f; exit 0"
    assert run_sandboxed(ws, ["/bin/sh", "-c", only_tmp], limits=limits).limits_hit == ("disk:tmp",)


@needs_bwrap
@needs_cgroup
def test_the_process_total_refuses_forks(ws: Path) -> None:
    code = textwrap.dedent("""
        import os, time
        count = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                count += 1
        except OSError as error:
            print(count, error.strerror)
    """)
    result = run_sandboxed(ws, [PY, "-c", code], limits=Limits(wall_seconds=60, processes=8))
    # 8 in all: bwrap, its init, the launcher and this program are four of them.
    assert (result.exit_code, result.stdout, result.limits_hit) == (
        0, "4 Resource temporarily unavailable\n", ("pids",))


@needs_bwrap
@needs_cgroup
def test_the_memory_total_kills(ws: Path) -> None:
    code = "block = bytearray(200 << 20)\nfor i in range(0, len(block), 4096): block[i] = 1"
    result = run_sandboxed(ws, [PY, "-c", code], limits=Limits(wall_seconds=60, memory_bytes=100 << 20))
    assert (result.exit_code, result.limits_hit) == (128 + signal.SIGKILL, ("memory",))


@needs_bwrap
@needs_cgroup
def test_the_cpu_total_stops_the_run(ws: Path) -> None:
    result = run_sandboxed(ws, [PY, "-c", "while True: pass"],
                           limits=Limits(wall_seconds=60, cpu_seconds=1, cpu_cores=1.0))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("cpu",))


def test_a_harness_that_is_not_root_makes_no_cgroup(ws: Path, monkeypatch: MonkeyPatch, groups_made: list) -> None:
    monkeypatch.setattr(sandbox.command, "sandbox_identity", lambda: sandbox.command.Identity(1000, 1000, False))

    def refuse(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "prlimit")

    monkeypatch.setattr(sandbox.subprocess, "Popen", refuse)
    run_sandboxed(ws, ["true"], limits=Limits(wall_seconds=60))
    assert groups_made == []


@needs_bwrap
def test_each_descriptor_bwrap_reads_is_named_for_what_it_holds(ws: Path, monkeypatch: MonkeyPatch) -> None:
    # As /proc/<pid>/fd of bwrap shows them while it sets up: memfd:scibench-<name>.
    names = []
    real = sandbox._memfd
    monkeypatch.setattr(sandbox, "_memfd", lambda name, data: names.append(name) or real(name, data))
    assert run_sandboxed(ws, ["true"], limits=Limits(wall_seconds=60)).exit_code == 0
    assert names == ["seccomp", "passwd", "group", "hosts", "hostname"]


def in_thread(call, deadline: float = 30.0):
    """Run `call` in a thread for at most `deadline` seconds: the thread and a list with the result."""
    results = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(deadline)
    return thread, results


@needs_bwrap
def test_bwrap_leads_a_process_group_of_its_own(ws: Path) -> None:
    # So killing the group reaches bwrap and whatever it left, and a terminal's signals do not.
    script = "while [ ! -e data/go ]; do sleep 0.05; done"
    results: list[RunResult] = []
    thread = threading.Thread(target=lambda: results.append(
        run_sandboxed(ws, ["/bin/sh", "-c", script], limits=Limits(wall_seconds=60))), daemon=True)
    thread.start()
    try:
        pid = None
        for _ in range(3000):
            pid = next((int(c.parent.name) for c in Path("/proc").glob("[0-9]*/cmdline")
                        if _argv(c)[:1] == [b"bwrap"] and str(ws / "prompt.md").encode() in _argv(c)), None)
            if pid is not None:
                break
            time.sleep(0.01)
        assert pid is not None, "bwrap did not start"
        assert (os.getpgid(pid), os.getsid(pid)) == (pid, pid)
    finally:
        (ws / "data" / "go").write_text("")
        thread.join(60)
    assert results[0].exit_code == 0


def _argv(cmdline: Path) -> list[bytes]:
    try:
        return cmdline.read_bytes().split(b"\0")
    except OSError:
        return []


@needs_bwrap
def test_a_sandbox_stuck_in_setup_is_killed_at_the_wall_clock(ws: Path, monkeypatch: MonkeyPatch) -> None:
    # bwrap reads the seccomp program to its end before it starts anything: a pipe never closed
    # holds it in setup, before it has told the harness the sandbox's pid.
    writers = []
    real = sandbox._memfd

    def stuck(name: str, data: bytes) -> int:
        if name != "seccomp":
            return real(name, data)
        read, write = os.pipe()
        writers.append(write)
        return read

    monkeypatch.setattr(sandbox, "_memfd", stuck)
    monkeypatch.setattr(sandbox.process, "STOP_GRACE_SECONDS", 3600)  # the stop alone must end it
    thread, results = in_thread(lambda: run_sandboxed(ws, ["true"], limits=Limits(wall_seconds=0.5)))
    ended_while_stuck = not thread.is_alive()
    for write in writers:  # lets a sandbox the stop did not end go on, and the test with it
        os.close(write)
    thread.join(60)
    assert ended_while_stuck, "the stop did not end a sandbox stuck in setup"
    result = results[0]
    assert (result.exit_code, result.timed_out, result.limits_hit, result.files) == (None, True, ("wall",), {})
    assert result.infra_error.startswith("sandbox setup exited with ")


def test_a_stop_signals_the_launchers_not_the_init_above_them() -> None:
    init = subprocess.Popen(["/bin/sh", "-c", "sleep 60 & echo $!; sleep 60 & echo $!; wait"],
                            stdout=subprocess.PIPE, start_new_session=True)
    forced = []
    try:
        assert init.stdout is not None
        launchers = sorted(int(init.stdout.readline()) for _ in range(2))
        assert sandbox.process.children_of(init.pid) == launchers
        sandbox.stop_launcher(Watch(sandbox_pid=init.pid), forced.append)
        # The init is not signalled: it ends by itself, status 0, once the SIGTERMed children are gone.
        assert init.wait(timeout=30) == 0
        assert forced == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(init.pid, signal.SIGKILL)
        init.wait(timeout=30)


def test_a_stop_before_the_sandbox_has_a_launcher_forces_the_end() -> None:
    forced = []
    no_pid = Watch()
    sandbox.stop_launcher(no_pid, forced.append)
    lonely = subprocess.Popen(["sleep", "60"])
    try:
        childless = Watch(sandbox_pid=lonely.pid)
        sandbox.stop_launcher(childless, forced.append)
    finally:
        lonely.kill()
    assert lonely.wait(timeout=30) == -signal.SIGKILL  # the SIGKILL here, not a SIGTERM before it
    assert forced == [no_pid, childless]
