"""Specification of stages/sandbox.py: what a program can and cannot do inside the sandbox."""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stages import sandbox
from stages.sandbox import (
    MASKED_DIRS,
    Limits,
    RunResult,
    SandboxUnavailable,
    build_bwrap_argv,
    run_sandboxed,
)

PY = sys.executable  # under /tmp/venv here: /tmp is masked, so the runtime re-binding is exercised
REPO = Path(__file__).resolve().parents[1]
LIMITS = Limits(wall_seconds=30)
needs_bwrap = pytest.mark.skipif(
    not sandbox.bwrap_available(),
    reason="bubblewrap is not installed (apt-get install -y bubblewrap)",
)


def make_workspace(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text("Report the mean of x.\n")
    (root / "data" / "x.csv").write_text("x\n1\n2\n")
    return root


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)


def run_python(ws: Path, code: str, limits: Limits = LIMITS, **kwargs) -> RunResult:
    return run_sandboxed(ws, [PY, "-c", textwrap.dedent(code)], limits=limits, **kwargs)


def process_state(pid: int) -> str | None:
    """The state letter of a host process (Z: zombie), or None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def is_running(pid: int) -> bool:
    """Whether `pid` lives; a zombie (killed, waiting for a lazy init to reap it) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return process_state(pid) not in (None, "Z")


def settled(check, seconds: float = 5.0):
    """Poll `check` until it is falsy or `seconds` pass: SIGKILL is delivered asynchronously."""
    deadline = time.monotonic() + seconds
    while (value := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def running_with_arg(token: str) -> list[int]:
    """Host pids of running processes that have `token` as one of their arguments."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if token.encode() in argv and is_running(int(cmdline.parent.name)):
            pids.append(int(cmdline.parent.name))
    return pids


READ_SECRET = """
    import json
    try:
        print(open({path!r}).read().strip())
    except FileNotFoundError:
        print("FileNotFoundError")
    json.dump({{"mean": 1.5}}, open("work/answer.json", "w"))
"""


@needs_bwrap
def test_program_reads_inputs_and_its_answer_appears_on_the_host(ws: Path) -> None:
    result = run_python(
        ws,
        """
        import json, os
        print(os.getcwd(), open("prompt.md").read().strip(), open("data/x.csv").read().split())
        json.dump({"mean": 1.5}, open("work/answer.json", "w"))
        """,
    )
    assert result == RunResult(
        exit_code=0,
        timed_out=False,
        wall_seconds=result.wall_seconds,
        stdout="/workspace Report the mean of x. ['x', '1', '2']\n",
        stderr="",
        infra_error=None,
    )
    assert json.loads((ws / "work" / "answer.json").read_text()) == {"mean": 1.5}


@needs_bwrap
def test_data_prompt_and_system_dirs_are_read_only(ws: Path) -> None:
    result = run_python(
        ws,
        """
        import errno
        for path in ["data/new.csv", "data/x.csv", "prompt.md", "/usr/probe", "/workspace/probe"]:
            try:
                open(path, "a").close()
                print(path, "written")
            except OSError as exc:
                print(path, errno.errorcode[exc.errno])
        """,
    )
    assert result.stdout.splitlines() == [
        "data/new.csv EROFS",
        "data/x.csv EROFS",
        "prompt.md EROFS",
        "/usr/probe EROFS",
        "/workspace/probe EROFS",
    ]
    assert sorted(p.name for p in (ws / "data").iterdir()) == ["x.csv"]


@needs_bwrap
def test_hidden_benchmark_dir_is_invisible_even_around_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /tmp is masked anyway; binding tmp_path back makes it an ordinary visible host directory,
    # so only `hidden` stands between the program and the gold answer.
    runtime = sandbox.python_runtime_paths()
    monkeypatch.setattr(sandbox, "python_runtime_paths", lambda: [*runtime, tmp_path])
    bench = tmp_path / "bench"
    (bench / "private").mkdir(parents=True)
    gold = bench / "private" / "gold.json"
    gold.write_text('{"mean": 1.5}')
    ws = make_workspace(bench / "queries" / "q1")

    code = READ_SECRET.format(path=str(gold))
    visible = run_python(ws, code, hidden=[])
    (ws / "work" / "answer.json").unlink()
    hidden = run_python(ws, code, hidden=[bench, tmp_path / "absent"])

    assert visible.stdout == '{"mean": 1.5}\n'
    assert (hidden.exit_code, hidden.stdout, hidden.infra_error) == (0, "FileNotFoundError\n", None)
    assert json.loads((ws / "work" / "answer.json").read_text()) == {"mean": 1.5}


@needs_bwrap
def test_hidden_project_root_is_invisible(ws: Path) -> None:
    code = READ_SECRET.format(path=str(REPO / "pyproject.toml"))
    if not any(REPO.is_relative_to(masked) for masked in MASKED_DIRS):
        # control: visible unless hidden (a checkout under /tmp or /home is masked anyway)
        assert "[project]" in run_python(ws, code).stdout
    assert run_python(ws, code, hidden=[REPO]).stdout == "FileNotFoundError\n"


@needs_bwrap
def test_host_tmp_is_masked_without_being_listed(ws: Path) -> None:
    code = READ_SECRET.format(path=str(ws / "prompt.md"))  # the workspace's own host path
    assert run_python(ws, code).stdout == "FileNotFoundError\n"


NETWORK_PROBE = """
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        print("connected")
    except OSError:
        print("OSError")
"""


@pytest.fixture
def listening_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@needs_bwrap
def test_network_is_unshared(ws: Path, listening_port: int) -> None:
    assert run_python(ws, NETWORK_PROBE.format(port=listening_port)).stdout == "OSError\n"


def test_unsandboxed_control_reaches_the_same_listener(
    ws: Path, listening_port: int, no_bwrap: None
) -> None:
    code = NETWORK_PROBE.format(port=listening_port)
    assert run_python(ws, code, unsafe_no_sandbox=True).stdout == "connected\n"


@needs_bwrap
def test_program_runs_as_nobody(ws: Path) -> None:
    assert run_python(ws, "import os; print(os.getuid(), os.getgid())").stdout == "65534 65534\n"


SLEEPER = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "{token}"])
    open("work/child.pid", "w").write(str(child.pid))
    print("started", flush=True)
    time.sleep(60)
"""


@needs_bwrap
def test_timeout_kills_the_program_and_its_children(ws: Path) -> None:
    token = uuid.uuid4().hex
    result = run_python(ws, SLEEPER.format(token=token), limits=Limits(wall_seconds=1))
    assert (result.exit_code, result.timed_out, result.infra_error) == (None, True, None)
    assert result.stdout == "started\n"
    assert 1.0 <= result.wall_seconds < 5.0
    # The pid in the file is the child's pid in the sandbox's PID namespace, not a host pid.
    assert (ws / "work" / "child.pid").read_text().isdigit()
    assert settled(lambda: running_with_arg(token)) == []


def test_unsandboxed_timeout_kills_the_process_group(ws: Path, no_bwrap: None) -> None:
    token = uuid.uuid4().hex
    code = SLEEPER.format(token=token)
    result = run_python(ws, code, limits=Limits(wall_seconds=1), unsafe_no_sandbox=True)
    assert (result.exit_code, result.timed_out, result.stdout) == (None, True, "started\n")
    pid = int((ws / "work" / "child.pid").read_text())  # a host pid here
    assert not settled(lambda: is_running(pid))
    assert settled(lambda: running_with_arg(token)) == []


@needs_bwrap
def test_file_size_limit_stops_a_large_write(ws: Path) -> None:
    result = run_python(
        ws,
        """
        import errno
        try:
            with open("work/big.bin", "wb") as handle:
                handle.write(b"0" * (2 << 20))
        except OSError as exc:
            print(errno.errorcode[exc.errno])
        """,
        limits=Limits(wall_seconds=30, file_size_bytes=1 << 20),
    )
    assert (result.exit_code, result.stdout) == (0, "EFBIG\n")
    assert (ws / "work" / "big.bin").stat().st_size == 1 << 20


@needs_bwrap
def test_only_whitelisted_variables_reach_the_program(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCIBENCH_SECRET", "1")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    code = "import json, os; print(json.dumps(dict(os.environ)))"
    env = json.loads(run_python(ws, code, extra_env={"SCIBENCH_RUN": "r1"}).stdout)
    path = env.pop("PATH").split(":")
    assert path[0] == str(Path(PY).parent)
    assert path[-3:] == ["/usr/local/bin", "/usr/bin", "/bin"]
    assert env == {
        "HOME": "/workspace/work",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLCONFIGDIR": "/workspace/work/.mpl",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
        "OPENBLAS_CORETYPE": "Haswell",
        "SCIBENCH_RUN": "r1",
        "PWD": "/workspace",  # exported by the /bin/sh launcher
    }


@needs_bwrap
def test_agent_dir_is_mounted_read_only_at_agent(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "main.py").write_text(
        "import errno\ntry:\n    open('/agent/x', 'w')\n"
        "except OSError as exc:\n    print(errno.errorcode[exc.errno])\n"
    )
    result = run_sandboxed(ws, [PY, "/agent/main.py"], limits=LIMITS, agent_dir=agent)
    assert (result.exit_code, result.stdout) == (0, "EROFS\n")


def test_unsafe_mode_runs_directly_and_warns(
    ws: Path, no_bwrap: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="stages.sandbox"):
        result = run_python(
            ws, "import os; print(os.getcwd(), os.environ['HOME'])", unsafe_no_sandbox=True
        )
    assert (result.exit_code, result.stdout) == (0, f"{ws} {ws / 'work'}\n")
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "UNSANDBOXED" in caplog.records[0].getMessage()


def test_missing_bwrap_without_unsafe_flag_refuses(ws: Path, no_bwrap: None) -> None:
    with pytest.raises(SandboxUnavailable, match="apt-get install -y bubblewrap"):
        run_python(ws, "print('never')")
    assert not (ws / "work" / "answer.json").exists()


@needs_bwrap
def test_bwrap_setup_failure_is_an_infra_error(ws: Path, tmp_path: Path) -> None:
    result = run_python(ws, "print('never')", agent_dir=tmp_path / "missing")
    assert (result.exit_code, result.timed_out, result.stdout) == (1, False, "")
    assert result.infra_error == (
        f"bwrap: Can't find source path {tmp_path / 'missing'}: No such file or directory"
    )


@needs_bwrap
def test_program_imitating_a_bwrap_failure_is_not_an_infra_error(ws: Path) -> None:
    # It also tries to drain the launcher's "started" pipe through every stdin it can reach.
    code = """
        import glob, os, sys
        for path in glob.glob("/proc/[0-9]*/fd/0"):
            try:
                os.read(os.open(path, os.O_RDONLY | os.O_NONBLOCK), 64)
            except OSError:
                pass
        sys.stderr.write("bwrap: Can't mount\\n")
        sys.exit(1)
    """
    result = run_python(ws, code)
    assert (result.exit_code, result.infra_error) == (1, None)
    assert result.stderr == "bwrap: Can't mount\n"


def test_argv_hides_before_rebinding_and_binds_the_workspace_last(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "bench" / "ws")
    venv, outer = tmp_path / "bench" / "venv", tmp_path / "outer"
    (outer / "secret").mkdir(parents=True)
    venv.mkdir()
    argv = build_bwrap_argv(
        ws,
        ["python", "-c", "pass"],
        agent_dir=None,
        hidden=[tmp_path / "bench", outer / "secret", tmp_path / "absent"],
        runtime_paths=[venv, outer],
        env={"LANG": "C.UTF-8"},
    )

    def at(*op: str | Path) -> int:
        strs = [str(x) for x in op]
        return next(i for i in range(len(argv)) if argv[i : i + len(strs)] == strs)

    assert argv[0] == "bwrap"
    assert argv[-4:] == ["--", "python", "-c", "pass"]
    assert at("--tmpfs", tmp_path / "bench") < at("--ro-bind", venv, venv)
    assert at("--ro-bind", outer, outer) < at("--tmpfs", outer / "secret")
    assert at("--ro-bind", venv, venv) < at("--bind", ws / "work", "/workspace/work")
    assert at("--bind", ws / "work", "/workspace/work") < at("--remount-ro", "/")
    assert str(tmp_path / "absent") not in argv
    assert at("--unshare-all") < at("--uid", "65534", "--gid", "65534") < at("--clearenv")
    assert at("--clearenv") < at("--setenv", "LANG", "C.UTF-8")
