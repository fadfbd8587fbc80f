"""Specification of stages/sandbox as a whole: what a program can and cannot do inside the sandbox.

The attacks (reading the gold, escaping limits, poisoning what the harness reads) are in
tests/adversarial/; this module states the sandbox's ordinary contract, each limit with its exact
outcome.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from scibench_testing.processes import running_with_arg

from stages import sandbox
from stages.sandbox import Collected, Limits, RunResult, SandboxUnavailable, run_sandboxed
from stages.sandbox.filesystem import Sizes, mount_args
from stages.sandbox.untrusted import MISSING

PY = sys.executable
LIMITS = Limits(wall_seconds=60)
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


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_available", lambda: False)


def run_python(ws: Path, code: str, limits: Limits = LIMITS, **kwargs) -> RunResult:
    return run_sandboxed(ws, [PY, "-c", textwrap.dedent(code)], limits=limits, **kwargs)




@needs_bwrap
def test_program_reads_inputs_and_its_answer_is_collected(ws: Path) -> None:
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
        limits_hit=(),
        files={"answer.json": Collected(b'{"mean": 1.5}', None)},
        isolation=result.isolation,
    )
    # work/ is the sandbox's own tmpfs: nothing is written into the host workspace.
    assert list((ws / "work").iterdir()) == []


@needs_bwrap
def test_only_requested_files_are_collected_and_a_missing_one_says_so(ws: Path) -> None:
    code = "open('work/a.txt', 'w').write('a'); open('work/b.txt', 'w').write('b')"
    result = run_python(ws, code, collect_files=("a.txt", "answer.json"))
    assert result.files == {"a.txt": Collected(b"a", None), "answer.json": MISSING}


@needs_bwrap
def test_data_prompt_and_system_dirs_are_read_only(ws: Path) -> None:
    result = run_python(
        ws,
        """
        import errno
        for path in ["data/new.csv", "data/x.csv", "prompt.md", "/usr/probe", "/workspace/probe",
                     "/etc/passwd", "/probe"]:
            try:
                open(path, "a").close()
                print(path, "written")
            except OSError as exc:
                print(path, errno.errorcode[exc.errno])
        """,
    )
    # An existing file of another owner (root's, seen by uid 65534) is refused by its permissions
    # before the read-only mount is checked.
    foreign = "EACCES" if AS_ROOT else "EROFS"
    assert result.stdout.splitlines() == [
        "data/new.csv EROFS",
        f"data/x.csv {foreign}",
        f"prompt.md {foreign}",
        "/usr/probe EROFS",
        "/workspace/probe EROFS",
        f"/etc/passwd {foreign}",
        "/probe EROFS",
    ]
    assert sorted(p.name for p in (ws / "data").iterdir()) == ["x.csv"]


@needs_bwrap
def test_the_filesystem_is_the_allowlist_and_nothing_else(ws: Path) -> None:
    code = "import json, os; print(json.dumps([sorted(os.listdir('/')), sorted(os.listdir('/etc'))]))"
    top, etc = json.loads(run_python(ws, code).stdout)
    runtime_tops = {Path(p).resolve().parts[1] for p in sandbox.python_runtime_paths()}
    system = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr",
              "workspace"}
    assert set(top) <= system | runtime_tops
    assert {"bin", "dev", "etc", "proc", "tmp", "usr", "workspace"} <= set(top)
    assert not {"home", "opt", "srv", "mnt", "media", "sys", "boot", "run"} & set(top)
    assert set(etc) <= {"alternatives", "group", "hostname", "hosts", "ld.so.cache", "ld.so.conf",
                        "ld.so.conf.d", "localtime", "mime.types", "nsswitch.conf", "os-release",
                        "passwd", "timezone"}
    assert {"group", "hostname", "hosts", "passwd"} <= set(etc)


@needs_bwrap
def test_a_hidden_path_inside_a_runtime_path_is_covered(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runtime (say a venv) that lives inside the project: the runtime is bound, the project's
    # gold under it is not.
    runtime = sandbox.python_runtime_paths()
    project = tmp_path / "project"
    (project / "private").mkdir(parents=True)
    (project / "private" / "gold.json").write_text('{"mean": 1.5}')
    (project / "lib.txt").write_text("runtime file")
    monkeypatch.setattr(sandbox, "python_runtime_paths", lambda: [*runtime, project])
    code = f"""
        import os
        print(open({str(project / "lib.txt")!r}).read(), sorted(os.listdir({str(project / "private")!r})))
    """
    assert run_python(ws, code).stdout == "runtime file ['gold.json']\n"
    assert run_python(ws, code, hidden=[project / "private"]).stdout == "runtime file []\n"


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


SLEEPER = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "{token}"])
    print("started", flush=True)
    time.sleep(60)
"""


@needs_bwrap
def test_wall_clock_stops_the_program_and_its_children(ws: Path) -> None:
    token = uuid.uuid4().hex
    result = run_python(ws, SLEEPER.format(token=token), limits=Limits(wall_seconds=1))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, True, ("wall",))
    assert (result.stdout, result.infra_error) == ("started\n", None)
    assert result.wall_seconds >= 1.0
    assert running_with_arg(token) == []


def test_unsandboxed_timeout_kills_the_process_group(ws: Path, no_bwrap: None) -> None:
    token = uuid.uuid4().hex
    code = SLEEPER.format(token=token)
    result = run_python(ws, code, limits=Limits(wall_seconds=1), unsafe_no_sandbox=True)
    assert (result.exit_code, result.timed_out, result.stdout) == (None, True, "started\n")
    assert result.limits_hit == ("wall",)
    assert running_with_arg(token) == []


@needs_bwrap
@pytest.mark.parametrize(("code", "status"), [
    ("import sys; sys.exit(3)", 3),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + 9),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", 128 + 11),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + 15),
])
def test_exit_status_is_the_code_or_128_plus_the_signal(ws: Path, code: str, status: int) -> None:
    result = run_python(ws, code)
    assert (result.exit_code, result.timed_out, result.limits_hit) == (status, False, ())


def test_unsandboxed_exit_status_is_the_code_or_128_plus_the_signal(ws: Path, no_bwrap: None) -> None:
    result = run_python(ws, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
                        unsafe_no_sandbox=True)
    assert result.exit_code == 137


@needs_bwrap
def test_file_size_limit_refuses_a_large_write(ws: Path) -> None:
    # Python ignores SIGXFSZ, so the write fails with EFBIG and the file stops at the limit.
    result = run_python(
        ws,
        """
        import errno, os
        try:
            with open("work/big.bin", "wb") as handle:
                handle.write(b"0" * (2 << 20))
        except OSError as exc:
            print(errno.errorcode[exc.errno], os.path.getsize("work/big.bin"))
        """,
        limits=Limits(wall_seconds=30, file_size_bytes=1 << 20),
    )
    assert (result.exit_code, result.stdout) == (0, f"EFBIG {1 << 20}\n")


@needs_bwrap
def test_file_size_limit_kills_a_program_that_does_not_ignore_sigxfsz(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 2097152 /dev/zero > work/big.bin"],
                           limits=Limits(wall_seconds=30, file_size_bytes=1 << 20))
    assert (result.exit_code, result.limits_hit) == (128 + 25, ("file_size",))


@needs_bwrap
def test_address_space_limit_binds_each_process(ws: Path) -> None:
    code = """
        try:
            block = bytearray(600 << 20)
            print("allocated")
        except MemoryError:
            print("MemoryError")
        small = bytearray(50 << 20)
        print("small ok")
    """
    result = run_python(ws, code, limits=Limits(wall_seconds=30, address_space_bytes=512 << 20))
    assert (result.exit_code, result.stdout) == (0, "MemoryError\nsmall ok\n")
    roomy = run_python(ws, code, limits=Limits(wall_seconds=30, address_space_bytes=4 << 30))
    assert roomy.stdout == "allocated\nsmall ok\n"


@needs_bwrap
@needs_cgroup
def test_cpu_time_is_a_total_over_all_processes(ws: Path) -> None:
    # Four busy processes, each far below the limit alone if it were per process.
    code = """
        import os
        for _ in range(2):
            os.fork()
        while True:
            pass
    """
    result = run_python(ws, code, limits=Limits(wall_seconds=60, cpu_seconds=1, cpu_cores=2.0))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("cpu",))


@needs_bwrap
def test_cpu_time_limit_without_totals_kills_by_sigxcpu(ws: Path, monkeypatch) -> None:
    monkeypatch.setattr(sandbox.cgroups, "create", lambda totals, root=None: None)
    result = run_python(ws, "while True: pass", limits=Limits(wall_seconds=60, cpu_seconds=1))
    assert (result.exit_code, result.limits_hit) == (128 + 24, ("cpu",))
    assert result.isolation.endswith("no cgroup: per-process rlimits only")


@needs_bwrap
@needs_cgroup
def test_process_total_refuses_forks_past_the_limit(ws: Path) -> None:
    code = """
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
    """
    result = run_python(ws, code, limits=Limits(wall_seconds=60, processes=16))
    # 16 in all: bwrap, its init, the launcher and this program are four of them.
    assert (result.exit_code, result.stdout) == (0, "12 Resource temporarily unavailable\n")
    assert result.limits_hit == ("pids",)


@needs_bwrap
@needs_cgroup
def test_memory_total_binds_the_processes_together(ws: Path) -> None:
    # Each of three children touches 200 MiB, under every per-process limit; 512 MiB in all.
    code = """
        import os, time
        children = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                block = bytearray(200 << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(3)
                os._exit(0)
            children.append(pid)
        statuses = [os.waitpid(pid, 0)[1] for pid in children]
        print(sorted(os.WIFSIGNALED(s) and os.WTERMSIG(s) for s in statuses))
    """
    result = run_python(ws, code, limits=Limits(wall_seconds=60, memory_bytes=512 << 20))
    assert (result.exit_code, result.limits_hit) == (0, ("memory",))
    assert json.loads(result.stdout.replace("False", "0")) in ([0, 0, 9], [0, 9, 9])


@needs_bwrap
def test_writable_places_are_size_capped(ws: Path) -> None:
    code = """
        for path in ["work/f", "/tmp/f", "/dev/shm/f"]:
            written = 0
            try:
                with open(path, "wb") as handle:
                    while True:
                        handle.write(b"0" * (1 << 20))
                        handle.flush()
                        written += 1
            except OSError as error:
                print(path, written, error.strerror)
    """
    limits = Limits(wall_seconds=60, work_bytes=8 << 20, tmp_bytes=4 << 20, shm_bytes=2 << 20)
    result = run_python(ws, code, limits=limits)
    assert result.stdout.splitlines() == [
        "work/f 8 No space left on device",
        "/tmp/f 4 No space left on device",
        "/dev/shm/f 2 No space left on device",
    ]
    assert result.limits_hit == ("disk:work", "disk:tmp", "disk:shm")


@needs_bwrap
def test_output_is_kept_as_a_bounded_tail_and_capped(ws: Path) -> None:
    code = "import sys\nsys.stdout.write('a' * 5000 + 'b' * 30000)\nsys.stdout.flush()"
    result = run_python(ws, code)
    assert result.stdout == "b" * 20_000
    flood = run_python(ws, "import sys\nwhile True: sys.stdout.write('x' * 65536)",
                       limits=Limits(wall_seconds=60, output_bytes=4 << 20))
    assert (flood.exit_code, flood.limits_hit, len(flood.stdout)) == (None, ("output",), 20_000)


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
        for path in glob.glob("/proc/[0-9]*/fd/*"):
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


def test_mount_args_make_parents_reachable_and_cap_every_writable_place(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    venv = tmp_path / "deep" / "venv"
    (venv / "secret").mkdir(parents=True)
    args = mount_args(ws, agent_dir=None, runtime_paths=[venv], hidden=[venv / "secret", tmp_path / "absent"],
                      sizes=Sizes(work_bytes=10, tmp_bytes=20, shm_bytes=30), etc_fds={"passwd": 7})

    def at(*op: str | Path) -> int:
        strs = [str(x) for x in op]
        return next(i for i in range(len(args)) if args[i: i + len(strs)] == strs)

    for parent in [p for p in reversed(venv.parents) if p not in (Path("/"), Path("/tmp"))]:
        assert at("--perms", "0755", "--dir", parent) < at("--ro-bind", venv, venv)
    assert at("--ro-bind", venv, venv) < at("--tmpfs", venv / "secret")
    assert at("--perms", "1777", "--size", "10", "--tmpfs", "/workspace/work") > 0
    assert at("--perms", "1777", "--size", "20", "--tmpfs", "/tmp") > 0
    assert at("--perms", "1777", "--size", "30", "--tmpfs", "/dev/shm") > 0
    assert at("--perms", "0644", "--ro-bind-data", "7", "/etc/passwd") > 0
    assert str(tmp_path / "absent") not in args
    assert args[-2:] == ["--remount-ro", "/"]
    assert "/home" not in args and "/opt" not in args and str(ws) not in args


@needs_bwrap
def test_writable_mounts_are_nosuid_and_nodev(ws: Path) -> None:
    code = """
        for line in open("/proc/self/mountinfo"):
            fields = line.split()
            if fields[4] in ("/workspace/work", "/tmp", "/dev/shm"):
                print(fields[4], "nosuid" in fields[5].split(","), "nodev" in fields[5].split(","))
    """
    assert sorted(run_python(ws, code).stdout.splitlines()) == [
        "/dev/shm True True", "/tmp True True", "/workspace/work True True"]
