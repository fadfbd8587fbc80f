"""Specification of stages/sandbox as a whole: the filesystem a program sees inside the sandbox.

It reads its inputs and its answer is collected (only the files asked for, a missing one said so);
data, prompt, agent and system directories are read-only; the filesystem is the allowlist and
nothing else, and a hidden path inside a runtime path is covered; every writable place is capped,
nosuid and nodev. The attacks (reading the gold, escaping limits, poisoning what the harness reads)
are in tests/adversarial/; the test_run_*.py modules state the sandbox's ordinary contract.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox.run_helpers import AS_ROOT, LIMITS, PY, make_workspace, needs_bwrap, run_python

from stages import sandbox
from stages.sandbox import Collected, RunResult, run_sandboxed
from stages.sandbox.filesystem import Sizes, mount_args
from stages.sandbox.untrusted import MISSING


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


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
