"""read_confined: a reader runs in a forked child; whatever becomes of it is a frame or a stated problem."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from stages.scoring.query.confined import (
    BOUNDS,
    BUG,
    FRAME,
    MEMORY,
    MEMORY_BYTES,
    PROBLEM,
    RESULT_BYTES,
    SECONDS,
    Bounds,
    address_space,
    outcome,
    read_confined,
)


class Problem(ValueError):
    """The reader's own error type: what the file did wrong."""


ROWS = pd.DataFrame({"gauge_id": pd.array(["01013500", None, "é"], dtype="str"),
                     "date": pd.to_datetime(["2000-01-01", "2000-01-02", "2000-01-03"]).astype("datetime64[ns]"),
                     "year": np.array([2000, 2001, 2002], dtype=np.int64),
                     "qsim_mm_d": [0.1, float("nan"), 1e300]})


def confined(read, bounds: Bounds = BOUNDS) -> pd.DataFrame:
    return read_confined(read, "f.parquet", Problem, bounds)


def refused(read, bounds: Bounds = BOUNDS) -> str:
    with pytest.raises(Problem) as error:
        confined(read, bounds)
    return str(error.value)


def test_the_default_bounds_are_2_gib_60_s_and_64_mib():
    assert (MEMORY_BYTES, SECONDS, RESULT_BYTES) == (2 << 30, 60.0, 64 << 20)
    assert Bounds() == Bounds(2 << 30, 60.0, 64 << 20)


def test_the_frame_is_sent_as_an_arrow_ipc_stream():
    kind, payload = outcome(lambda: ROWS, Problem)
    assert kind == FRAME
    pd.testing.assert_frame_equal(pa.ipc.open_stream(payload).read_all().to_pandas(), ROWS, check_exact=True)


def test_the_frame_comes_back_exactly_with_its_dtypes_and_index():
    frame = confined(lambda: ROWS)
    pd.testing.assert_frame_equal(frame, ROWS, check_exact=True)
    assert [str(dtype) for dtype in frame.dtypes] == ["str", "datetime64[ns]", "int64", "float64"]
    assert isinstance(frame.index, pd.RangeIndex)


def test_the_readers_own_problem_keeps_its_message():
    def read():
        raise Problem("f.parquet lacks the columns ['qsim_mm_d']")
    assert outcome(read, Problem) == (PROBLEM, b"f.parquet lacks the columns ['qsim_mm_d']")
    assert refused(read) == "f.parquet lacks the columns ['qsim_mm_d']"


def test_a_problem_raised_from_a_memory_error_is_the_memory_problem():
    # Readers turn every decoder error into their own problem; the MemoryError stays in the chain.
    def read():
        try:
            raise MemoryError("malloc of size 64 failed")
        except MemoryError as error:
            raise Problem("f.parquet: unreadable values: malloc of size 64 failed") from error
    assert outcome(read, Problem) == (MEMORY, b"")

    def read_twice_wrapped():
        try:
            read()
        except Problem as error:
            raise Problem("f.parquet is not a readable Parquet file") from error
    assert outcome(read_twice_wrapped, Problem) == (MEMORY, b"")
    assert refused(read_twice_wrapped) == f"f.parquet: reading it needs more than {MEMORY_BYTES} bytes of memory"


def test_an_error_that_is_not_the_files_is_the_harness_s_bug_with_its_traceback():
    def read():
        raise KeyError("qsim_mm_d")
    kind, payload = outcome(read, Problem)
    assert kind == BUG
    assert payload.decode().startswith("Traceback (most recent call last):")
    assert payload.decode().endswith("KeyError: 'qsim_mm_d'\n")


def test_an_allocation_past_the_bound_is_the_memory_problem():
    def read():
        np.ones(512 << 20, dtype=np.uint8)  # 512 MiB against a 256 MiB bound
        return ROWS
    assert (refused(read, Bounds(memory_bytes=256 << 20))
            == "f.parquet: reading it needs more than 268435456 bytes of memory")


def test_the_child_may_grow_its_address_space_by_the_bound_and_no_more():
    def read():
        limit, hard = resource.getrlimit(resource.RLIMIT_AS)
        return pd.DataFrame({"headroom": [limit - address_space()], "hard": [hard == limit]})
    before = resource.getrlimit(resource.RLIMIT_AS)
    frame = confined(read, Bounds(memory_bytes=300 << 20))
    assert 280 << 20 < frame["headroom"].iloc[0] <= 300 << 20
    assert frame["hard"].iloc[0]  # the child cannot raise it again
    assert resource.getrlimit(resource.RLIMIT_AS) == before  # the parent is not bound


def test_a_reader_killed_by_a_signal_died():
    # SIGKILL is what the kernel's OOM killer sends.
    assert refused(lambda: os.kill(os.getpid(), signal.SIGKILL)) == "f.parquet: its reader died (SIGKILL)"


def test_a_reader_that_exits_without_a_frame_is_refused():
    assert refused(lambda: os._exit(3)) == "f.parquet: its reader exited with code 3"


def test_a_reader_past_its_time_twice_is_killed_and_refused(tmp_path: Path):
    pids = tmp_path / "pids"

    def read():
        with pids.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        time.sleep(60)

    started = time.monotonic()
    assert refused(read, Bounds(seconds=1.0)) == "f.parquet: reading it took longer than 1 s"
    assert time.monotonic() - started < 10
    children = pids.read_text().split()
    assert len(children) == 2 and children[0] != children[1]  # a second child, after the first overran
    assert not any(Path(f"/proc/{pid}").exists() for pid in children)  # each killed and reaped


def test_a_reader_that_hung_once_is_read_again_in_a_new_child(tmp_path: Path):
    first = tmp_path / "first"

    def read():
        if not first.exists():  # the first child hangs, as on a lock another thread held at the fork
            first.write_text(str(os.getpid()))
            time.sleep(60)
        return pd.DataFrame({"qsim_mm_d": [1.5, 2.5]})

    frame = confined(read, Bounds(seconds=1.0))
    assert frame["qsim_mm_d"].tolist() == [1.5, 2.5]
    assert not Path(f"/proc/{first.read_text()}").exists()


def test_rows_past_the_result_bound_are_refused():
    def read():
        return pd.DataFrame({"qsim_mm_d": np.zeros(10_000)})
    assert refused(read, Bounds(result_bytes=1000)) == "f.parquet: the rows read from it take more than 1000 bytes"


@pytest.mark.parametrize("error", [KeyError("qsim_mm_d"), SystemExit(0)], ids=["KeyError", "SystemExit"])
def test_the_harness_s_bug_is_raised_not_scored_and_the_child_never_returns_into_the_caller(error):
    def read():
        raise error
    with pytest.raises(RuntimeError, match=r"^reading f.parquet failed in the harness's code:\n") as raised:
        confined(read)
    assert type(error).__name__ in str(raised.value)


FORK_BESIDE_BLAS = """
import os, sys, threading, time
import stages.scoring.query.confined  # what every process that reads artifacts imports
import numpy as np
from threadpoolctl import threadpool_info

matrix, vector = np.random.default_rng(0).random((3000, 3000)), np.ones(3000)
done = [0]

def blas():
    while True:
        matrix @ vector
        done[0] += 1

threading.Thread(target=blas, daemon=True).start()
for _ in range(200):  # as a label thread forks to read an artifact while the main thread fits models
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.005)
before = done[0]
time.sleep(1.0)
print(done[0] - before, sorted({pool["num_threads"] for pool in threadpool_info()}))
"""


def test_forks_beside_a_blas_call_do_not_hang_it():
    """With a multi-threaded OpenBLAS the BLAS thread stops for good after such forks (0 calls a second)."""
    done = subprocess.run([sys.executable, "-c", FORK_BESIDE_BLAS], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[3], check=True)
    calls, threads = done.stdout.split(maxsplit=1)
    assert int(calls) > 0 and threads.strip() == "[1]"
