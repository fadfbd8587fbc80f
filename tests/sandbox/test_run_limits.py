"""Specification of stages/sandbox as a whole: each resource limit on a program, with its exact outcome.

The file size limit (EFBIG for a program that ignores SIGXFSZ, death by it otherwise), the address
space limit per process, the CPU time as a total over all processes (or, without a cgroup, per
process by SIGXCPU), the process and memory totals (as root, with a per-run cgroup), the size caps
of the writable places, and the output kept as a bounded tail and capped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox.init_helpers import FORK_UNTIL_REFUSED
from sandbox.run_helpers import make_workspace, needs_bwrap, needs_cgroup, run_python
from scibench_testing.limits import limits_with

from stages import sandbox
from stages.sandbox import run_sandboxed


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


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
        limits=limits_with(wall_seconds=30, file_size_bytes=1 << 20),
    )
    assert (result.exit_code, result.stdout) == (0, f"EFBIG {1 << 20}\n")


@needs_bwrap
def test_file_size_limit_kills_a_program_that_does_not_ignore_sigxfsz(ws: Path) -> None:
    result = run_sandboxed(ws, ["/bin/sh", "-c", "head -c 2097152 /dev/zero > work/big.bin"],
                           limits=limits_with(wall_seconds=30, file_size_bytes=1 << 20))
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
    result = run_python(ws, code, limits=limits_with(wall_seconds=30, address_space_bytes=512 << 20))
    assert (result.exit_code, result.stdout) == (0, "MemoryError\nsmall ok\n")
    roomy = run_python(ws, code, limits=limits_with(wall_seconds=30, address_space_bytes=4 << 30))
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
    result = run_python(ws, code, limits=limits_with(wall_seconds=60, cpu_seconds=1, cpu_cores=2.0))
    assert (result.exit_code, result.timed_out, result.limits_hit) == (None, False, ("cpu",))


@needs_bwrap
def test_cpu_time_limit_without_totals_kills_by_sigxcpu(ws: Path, monkeypatch) -> None:
    monkeypatch.setattr(sandbox.cgroups, "create", lambda totals, root=None: None)
    result = run_python(ws, "while True: pass", limits=limits_with(wall_seconds=60, cpu_seconds=1))
    assert (result.exit_code, result.limits_hit) == (128 + 24, ("cpu",))
    assert result.isolation.endswith("no cgroup: per-process rlimits only")


@needs_bwrap
@needs_cgroup
def test_process_total_refuses_forks_past_the_limit(ws: Path) -> None:
    result = run_python(ws, FORK_UNTIL_REFUSED, limits=limits_with(wall_seconds=60, processes=16))
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
    result = run_python(ws, code, limits=limits_with(wall_seconds=60, memory_bytes=512 << 20))
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
    limits = limits_with(wall_seconds=60, work_bytes=8 << 20, tmp_bytes=4 << 20, shm_bytes=2 << 20)
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
                       limits=limits_with(wall_seconds=60, output_bytes=4 << 20))
    assert (flood.exit_code, flood.limits_hit, len(flood.stdout)) == (None, ("output",), 20_000)
