"""Specification of stages/sandbox as a whole: what a program inside the sandbox is cut off from.

The network (an unsandboxed control run reaches the same listener), privileges (the program is an
unprivileged host user without capabilities) and the harness's environment (only whitelisted
variables reach it). Without bwrap a run is refused, unless the unsafe flag allows it: then it runs
directly and warns. The attacks are in tests/adversarial/.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox.run_helpers import AS_ROOT, PY, make_workspace, needs_bwrap, run_python

from stages.sandbox import Collected, SandboxUnavailable


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


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
def test_program_is_an_unprivileged_host_user_without_capabilities(ws: Path) -> None:
    code = """
        import os
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
        print(*(status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                            "NoNewPrivs", "Seccomp")))
        print(os.getgroups())
        open("work/whoami", "w").write(str(os.getuid()))
    """
    result = run_python(ws, code, collect_files=("whoami",))
    caps, groups = result.stdout.splitlines()
    assert caps == " ".join(["0000000000000000"] * 5 + ["1", "2"])
    # Who wrote the file, as the host sees it: never root.
    host_uid = result.files["whoami"].owner_uid
    if AS_ROOT:  # no user namespace: the uid inside is the host uid, and it has no groups
        assert (result.files["whoami"].data, host_uid, groups) == (b"65534", 65534, "[]")
    else:  # an unprivileged user namespace over the harness's own (non-root) uid
        assert host_uid == os.geteuid() != 0


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
    assert path[-1] == "/bin" and {"/usr/local/bin", "/usr/bin"} <= set(path)
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
def test_no_process_in_the_sandbox_holds_a_variable_of_the_harness(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap's init keeps the environment it was started with; run as the harness's own user, code
    in the sandbox can read it at /proc/1/environ, so bwrap starts with PATH alone."""
    monkeypatch.setenv("SCIBENCH_API_KEY_CANARY", "sk-canary-5c1d")
    code = ("import json, os\nseen = {}\nfor pid in (p for p in os.listdir('/proc') if p.isdigit()):\n"
            "    try:\n        seen[pid] = open(f'/proc/{pid}/environ', 'rb').read().decode()\n"
            "    except OSError as e:\n        seen[pid] = type(e).__name__\nprint(json.dumps(seen))")
    seen = json.loads(run_python(ws, code).stdout)
    assert all("sk-canary-5c1d" not in text for text in seen.values())
    assert seen["1"] == ("PermissionError" if AS_ROOT else f"PATH={os.environ['PATH']}\0")


def test_unsafe_mode_runs_directly_and_warns(
    ws: Path, no_bwrap: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="stages.sandbox"):
        result = run_python(
            ws, "import os; print(os.getcwd(), os.environ['HOME']); open('work/answer.json', 'w').write('1')",
            unsafe_no_sandbox=True,
        )
    assert (result.exit_code, result.stdout) == (0, f"{ws} {ws / 'work'}\n")
    assert result.files == {"answer.json": Collected(b"1", None)}
    assert result.isolation == "none: --unsafe-no-sandbox"
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "UNSANDBOXED" in caplog.records[0].getMessage()


def test_missing_bwrap_without_unsafe_flag_refuses(ws: Path, no_bwrap: None) -> None:
    with pytest.raises(SandboxUnavailable, match="apt-get install -y bubblewrap"):
        run_python(ws, "print('never')")
    assert not (ws / "work" / "answer.json").exists()
