"""Specification of the sandbox's extra read-only binds: one host folder (a proxy's socket) at `/llm`.

A program inside can connect to a Unix socket in the bound folder and talk to the host process
listening on it; the folder is read-only, and nothing else of the host becomes visible.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from scibench_testing.limits import limits_with

from stages import sandbox
from stages.sandbox import run_sandboxed
from stages.sandbox.command import sandbox_identity
from stages.sandbox.filesystem import Sizes, mount_args
from stages.sandbox.unsandboxed import rebased

PY = sys.executable
needs_bwrap = pytest.mark.skipif(not sandbox.bwrap_available(),
                                 reason="bubblewrap is not installed (apt-get install -y bubblewrap)")
SIZES = Sizes(work_bytes=1 << 20, tmp_bytes=1 << 20, shm_bytes=1 << 20)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "data").mkdir(parents=True)
    (tmp_path / "ws" / "work").mkdir()
    (tmp_path / "ws" / "prompt.md").write_text("p\n")
    return tmp_path / "ws"


def echo_server(folder: Path) -> tuple[socket.socket, threading.Thread]:
    """A Unix socket `folder/echo.sock` that answers one connection with `got <bytes>`, reachable by
    the sandbox user only (folder 0700 and socket 0600, both owned by that user)."""
    identity = sandbox_identity()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "echo.sock"))
    listener.listen(1)
    for path, mode in ((folder, 0o700), (folder / "echo.sock", 0o600)):
        os.chown(path, identity.uid, identity.gid)
        os.chmod(path, mode)

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.sendall(b"got " + connection.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


@needs_bwrap
def test_a_program_talks_to_the_bound_socket_and_sees_nothing_else_of_the_host(ws: Path, tmp_path: Path):
    host = tmp_path / "host"
    proxy = host / "proxy"
    proxy.mkdir(parents=True)
    (host / "beside.txt").write_text("not for the sandbox")
    listener, thread = echo_server(proxy)
    code = """
        import errno, json, os, socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/llm/echo.sock")
        s.sendall(b"hello")
        reply = s.recv(100).decode()
        try:
            open("/llm/new", "w")
            write = "written"
        except OSError as exc:
            write = errno.errorcode[exc.errno]
        print(json.dumps([reply, sorted(os.listdir("/llm")), write, sorted(os.listdir("/")),
                          os.path.exists(os.environ["HOST_DIR"])]))
        """
    result = run_sandboxed(ws, [PY, "-c", textwrap.dedent(code)], limits=limits_with(wall_seconds=60),
                           extra_ro_binds={proxy: "/llm"}, extra_env={"HOST_DIR": str(host)})
    thread.join(timeout=10)
    listener.close()
    reply, listed, write, top, host_visible = json.loads(result.stdout)
    assert (result.exit_code, reply, listed, write, host_visible) == (0, "got hello", ["echo.sock"], "EROFS", False)
    without = run_sandboxed(ws, [PY, "-c", "import json, os; print(json.dumps(sorted(os.listdir('/'))))"],
                            limits=limits_with(wall_seconds=60))
    assert sorted(top) == sorted([*json.loads(without.stdout), "llm"])


def test_an_extra_bind_is_placed_after_the_workspace_and_before_the_final_remount(ws: Path, tmp_path: Path):
    folder = tmp_path / "proxy"
    folder.mkdir()
    args = mount_args(ws, agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={},
                      extra_ro_binds={folder: "/llm"})
    assert args[-5:] == ["--ro-bind", str(folder), "/llm", "--remount-ro", "/"]
    assert args.index("/workspace/work") < args.index("/llm")


@pytest.mark.parametrize("place", ["/workspace", "/agent", "/usr", "/tmp", "/proc", "/etc", "llm", "/llm/x",
                                   "/LLM", "/", "/.."])
def test_an_extra_bind_must_be_a_new_top_level_name(ws: Path, tmp_path: Path, place: str):
    with pytest.raises(ValueError, match="not a new top-level name"):
        mount_args(ws, agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={},
                   extra_ro_binds={tmp_path: place})


def test_an_extra_bind_cannot_cover_the_runtime_or_bind_a_missing_folder(ws: Path, tmp_path: Path):
    runtime = tmp_path / "venv"
    runtime.mkdir()
    with pytest.raises(ValueError, match="not a new top-level name"):
        mount_args(ws, agent_dir=None, runtime_paths=[runtime], hidden=[], sizes=SIZES, etc_fds={},
                   extra_ro_binds={tmp_path: "/" + runtime.parts[1]})
    with pytest.raises(ValueError, match="is not a directory"):
        mount_args(ws, agent_dir=None, runtime_paths=[], hidden=[], sizes=SIZES, etc_fds={},
                   extra_ro_binds={tmp_path / "absent": "/llm"})


def test_unsandboxed_a_variable_under_a_bind_points_at_the_host_folder():
    env = {"SOCKET": "/llm/llm.sock", "DIR": "/llm", "OTHER": "/llmx/a", "PLAIN": "x"}
    assert rebased(env, {Path("/host/p"): "/llm"}) == {
        "SOCKET": "/host/p/llm.sock", "DIR": "/host/p", "OTHER": "/llmx/a", "PLAIN": "x"}
