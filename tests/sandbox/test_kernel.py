"""A query's kernel (stages/sandbox/kernel.py, cells.py): state across cells, limits, restarts, attacks.

Every test runs real cells in a real sandbox; the attacking cells fork without end, fill memory,
write outside `work/`, read `/proc` of the kernel's parent, forge the kernel's reply and kill the
zygote, each with the outcome the harness must see.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from scibench_testing.limits import limits_with

from stages.sandbox.command import environment, sandbox_identity
from stages.sandbox.filesystem import python_runtime_paths
from stages.sandbox.kernel import Kernel, KernelDied

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

PROJECT = Path(__file__).resolve().parents[2]
LIMITS = limits_with(wall_seconds=20, cpu_seconds=20, memory_bytes=256 << 20, address_space_bytes=4 << 30,
                     processes=64)


def needs_cgroup(kernel: Kernel) -> None:
    if kernel.pool.group is None:
        pytest.skip("the process and memory totals are a cgroup's (root and a cgroup hierarchy)")


@pytest.fixture
def kernel(tmp_path: Path):
    public = tmp_path / "public"
    public.mkdir()
    (public / "table.csv").write_text("a\n1\n")
    with Kernel(LIMITS, "the prompt", public, hidden=(PROJECT, tmp_path)) as kernel:
        yield kernel


def test_state_persists_across_cells_and_errors_read_as_python_reports_them(kernel):
    assert kernel.run("import json\nx = 41", 5, 1000).exit_code == 0
    assert kernel.run("print(x + 1)", 5, 1000).stdout == "42\n"
    failed = kernel.run("def f():\n    return 1 / 0\nf()", 5, 1000)
    assert failed.exit_code == 1 and not failed.restarted
    assert failed.stderr.splitlines()[1:3] == ['  File "<cell 3>", line 3, in <module>', "    f()"]
    assert failed.stderr.endswith("ZeroDivisionError: division by zero\n")
    syntax = kernel.run("def f(:\n    pass", 5, 1000)
    assert (syntax.exit_code, syntax.stderr.splitlines()[-1]) == (1, "SyntaxError: invalid syntax")
    exited = kernel.run("import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)", 5, 1000)
    assert (exited.exit_code, exited.stderr, exited.restarted) == (3, "bye\n", False)
    assert kernel.run("print(json.dumps({'x': x}))", 5, 1000).stdout == '{"x": 41}\n'


def test_a_cells_output_keeps_its_first_and_last_bytes(kernel):
    ran = kernel.run("print('a' * 5000 + 'b' * 5000, end='')", 5, 100)
    assert ran.stdout == "a" * 100 + "\n[... 9800 bytes cut ...]\n" + "b" * 100


def test_a_hung_cell_is_killed_at_its_wall_clock_and_the_kernel_restarts_with_the_files_kept(kernel):
    kernel.run("x = 1\nopen('work/kept.txt', 'w').write('kept')", 5, 1000)
    hung = kernel.run("import time\ntime.sleep(30)", 1, 1000)
    assert (hung.exit_code, hung.timed_out, hung.restarted, hung.limits_hit) == (None, True, True, ("wall",))
    assert 1 <= hung.seconds < 5
    after = kernel.run("print(open('work/kept.txt').read())\nprint(x)", 5, 1000)
    assert after.stdout == "kept\n" and after.stderr.endswith("NameError: name 'x' is not defined\n")
    assert kernel.hand_in(["kept.txt"], 1000)["kept.txt"].data == b"kept"


def test_a_cell_that_ends_the_kernel_gets_its_status_and_a_fresh_kernel(kernel):
    ended = kernel.run("import os\nos._exit(7)", 5, 1000)
    assert (ended.exit_code, ended.restarted, ended.timed_out) == (7, True, False)
    assert kernel.run("print('alive')", 5, 1000).stdout == "alive\n"


def test_a_cell_that_forges_the_kernels_reply_gets_the_kernel_restarted(kernel):
    forged = kernel.run(
        "import os, stat\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if stat.S_ISFIFO(os.fstat(fd).st_mode): os.write(fd, b'not json\\n')\n"
        "    except OSError: pass\n", 5, 1000)
    assert (forged.exit_code, forged.restarted) == (None, True)
    assert kernel.run("print('alive')", 5, 1000).stdout == "alive\n"


def test_writes_outside_work_fail_and_work_is_the_only_place_handed_in(kernel):
    ran = kernel.run(
        "import errno\n"
        "for path in ('data/table.csv', 'prompt.md', '/pool/prompt.md', '/warm/cells.py', '/etc/passwd', '/usr/x'):\n"
        "    try:\n"
        "        open(path, 'a').write('x')\n"
        "        print(path, 'written')\n"
        "    except OSError as e:\n"
        "        print(path, errno.errorcode[e.errno])\n", 5, 1000)
    # As root, the sandbox user may only read the existing files (EACCES, checked before the mount);
    # unprivileged, they are its own and the read-only mount refuses. Creating a file is refused by
    # the read-only mount everywhere but work/, /tmp and /scratch.
    existing = "EACCES" if sandbox_identity().as_root else "EROFS"
    assert ran.stdout.splitlines() == [f"data/table.csv {existing}", f"prompt.md {existing}",
                                       f"/pool/prompt.md {existing}", f"/warm/cells.py {existing}",
                                       f"/etc/passwd {existing}", "/usr/x EROFS"]


def test_proc_of_the_kernels_parent_shows_nothing_of_the_host(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIBENCH_KERNEL_CANARY", "canary-7f3a")  # in the harness, never in the sandbox
    (tmp_path / "public").mkdir()
    with Kernel(LIMITS, "the prompt", tmp_path / "public", hidden=(PROJECT, tmp_path)) as kernel:
        ran = kernel.run(
            "import os, json\n"
            "seen = {}\n"
            "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    try:\n"
            "        seen[pid] = open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace')\n"
            "    except OSError as e:\n"
            "        seen[pid] = type(e).__name__\n"
            "print(json.dumps({'parent': os.getppid(), 'seen': seen}))\n", 5, 100_000)
    seen = json.loads(ran.stdout)
    as_root = sandbox_identity().as_root  # else the sandbox is the harness's user: bwrap's init is readable
    assert seen["seen"]["1"] == ("PermissionError" if as_root else f"PATH={os.environ['PATH']}\0")
    assert all("canary-7f3a" not in text for text in seen["seen"].values())
    names = {entry.split("=", 1)[0] for entry in seen["seen"][str(seen["parent"])].split("\0") if entry}
    assert names <= {"PWD", *environment(python_runtime_paths(), "/scratch", None)}  # the allowlist, and bwrap's PWD


def test_a_fork_without_end_is_refused_at_the_process_total(kernel):
    needs_cgroup(kernel)
    ran = kernel.run(
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print(type(e).__name__, n < 64)\n", 10, 1000)
    assert (ran.exit_code, ran.stdout, ran.restarted) == (0, "BlockingIOError True\n", False)
    assert "pids" in ran.limits_hit


def test_a_cell_that_fills_memory_is_killed_and_the_kernel_restarts(kernel):
    needs_cgroup(kernel)
    kernel.run("x = 1", 5, 1000)
    ran = kernel.run("block = bytearray(1 << 30)", 10, 1000)  # 1 GiB, past 256 MiB and the zygote's share
    assert (ran.exit_code, ran.restarted, ran.timed_out) == (None, True, False)
    assert "memory" in ran.limits_hit
    assert kernel.run("print('x' in dir())", 5, 1000).stdout == "False\n"


def test_a_cell_that_kills_the_zygote_ends_the_query(kernel):
    with pytest.raises(KernelDied, match="the query's sandbox ended"):
        kernel.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(5)", 5, 1000)


def test_a_kernel_answers_when_the_harness_holds_more_than_1024_descriptors(tmp_path):
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # 128 kernels in flight hold as many
    try:
        (tmp_path / "public").mkdir()
        with Kernel(LIMITS, "the prompt", tmp_path / "public", hidden=(PROJECT, tmp_path)) as kernel:
            assert kernel.run("print('answered')", 5, 1000).stdout == "answered\n"
    finally:
        for fd in held:
            os.close(fd)


def test_the_kernel_is_in_the_harness_environment_without_its_startup_hooks(kernel):
    """The zygote starts as `python -S` and enters the harness's virtual environment itself."""
    import site
    import sys

    ran = kernel.run("import sys, yaml\nprint(sys.prefix)\nprint(sys.path[-1])\n"  # yaml: in every test venv
                     "print(sorted(m for m in sys.modules if 'editable' in m))\n"
                     "print(type(exit).__name__, type(help).__name__)", 30, 4000)
    assert ran.exit_code == 0, ran.stderr
    assert ran.stdout.splitlines() == [sys.prefix, site.getsitepackages()[-1], "[]", "Quitter _Helper"]
    quitted = kernel.run("quit(4)", 5, 1000)
    assert (quitted.exit_code, quitted.restarted) == (4, False)
