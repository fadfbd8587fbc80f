"""Files that decode to gigabytes or lie about their pages: a stated problem each, and a harness that stays small.

Every file is real, written here with pyarrow, and passes the footer checks of
`stages.scoring.query.artifacts` (few rows, a small declared uncompressed size, the declared columns):

- `dictionary bomb`: under 1 kB. `gauge_id` is one 256 KiB string, dictionary-encoded over 16,384
  rows (the RLE run of index 0 takes a few bytes): 4 GiB once decoded to plain strings. The Arrow
  schema is not stored, so the reader decodes the column instead of keeping the dictionary.
- `lying page header`: `gauge_id` holds the four required ids and one 128 MiB string of zeros,
  in one zstd data page (a few kB compressed). Its page header says `uncompressed_page_size`
  128 MiB; the test rewrites it to 2**31 - 1. The value is a Thrift compact zigzag varint, and a
  real size of at least 2**27 bytes needs 5 bytes, as 2**31 - 1 does: the header keeps its length
  and every offset of the file stays right. Unpatched, the same file grades (the 128 MiB row is
  an ignored extra row); patched, the decoder asks for a 2 GiB buffer before it decompresses.
- `truncated`, `random bytes`, `zeroed pages`: half a good file, 4 kB of noise, and a good file
  whose pages are zeros under an intact footer.

The files are graded along the harness's path (`recompute`, then `score_query`) by a fresh Python
process (`GRADER`), so that its peak RSS (`ru_maxrss`, which only grows) starts from its imports
and not from what this session allocated, e.g. the 128 MiB page written here. It reports for each
file the problem, the outcome and how much its own peak grew while grading. It runs with an 8 GiB
address-space limit, so that a regression (a bomb decoded in the harness) fails here instead of
filling the machine.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scibench_testing.graded import parquet

from stages.scoring.query.artifacts import MAX_UNCOMPRESSED_BYTES
from stages.scoring.query.confined import MEMORY_BYTES

TESTS = Path(__file__).resolve().parents[2]
ROOT = TESTS.parent
GRADER_ADDRESS_SPACE = 8 << 30
MARGIN_KIB = 200 << 10  # the grading process's peak may grow by less than 200 MiB per file
IDS = ["01013500", "01013500", "01022500", "01022500"]
DATES = ["2000-01-01", "2000-01-02"] * 2
GOOD = pd.DataFrame({"gauge_id": IDS, "date": pd.to_datetime(DATES), "qsim_mm_d": [1.0, 2.0, 3.0, 4.0]})
TRUTH = json.dumps({"gauge_id": IDS, "date": DATES, "qobs_mm_d": [1.0, 2.0, 3.0, 5.0]})
GRADER = """
import json, resource, sys
import pandas as pd
from scibench_testing.graded import graded_task, metric
from stages.scoring.query.recompute import recompute
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.scorer import score_query

truth = pd.DataFrame(json.loads(sys.argv[1])).astype({"date": "datetime64[ns]"})
task = graded_task([metric("nse", "nse", "qsim_mm_d", "median", "> 0.5")])
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = recompute(task, Execution(0, False, None, None), data, None, truth, truth[["gauge_id", "date"]],
                       "gauge_id")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    outcome = score_query(task.answer, result.execution, {"metrics": {"nse": None}}).outcome
    print(json.dumps({"problem": result.artifact_problem, "outcome": outcome, "grown_kib": grown}))
"""


def written(table: pa.Table, **options) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **options)
    return buffer.getvalue()


def dictionary_bomb(length: int = 1 << 18, rows: int = 1 << 14) -> bytes:
    """One `length`-byte string repeated over `rows` rows: `length * rows` bytes decoded."""
    ids = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array(["x" * length]))
    table = pa.table({"gauge_id": ids, "date": pa.array(np.zeros(rows, "datetime64[ms]")),
                      "qsim_mm_d": np.zeros(rows)})
    return written(table, store_schema=False, compression="zstd")


def one_huge_page(size: int = 1 << 27) -> bytes:
    """The good rows plus one `size`-byte key of zeros, all of `gauge_id` in one zstd data page."""
    zeros = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(np.array([0, size], np.int32)),
                                                   pa.py_buffer(np.zeros(size, np.uint8))])
    ids = pa.concat_arrays([pa.array(IDS, pa.string()), zeros])
    table = pa.table({"gauge_id": ids, "date": pa.array(pd.to_datetime([*DATES, DATES[0]])),
                      "qsim_mm_d": [1.0, 2.0, 3.0, 4.0, 0.0]})
    return written(table, compression="zstd", use_dictionary=False, write_statistics=False)


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at `position` and the position after it."""
    value = shift = 0
    while data[position] & 0x80:
        value |= (data[position] & 0x7F) << shift
        position, shift = position + 1, shift + 7
    return value | data[position] << shift, position + 1


def with_page_size(data: bytes, size: int) -> tuple[bytes, int]:
    """`data` whose first data page of the first column claims `size` uncompressed bytes; and the true size.

    A PageHeader (Thrift compact) starts with field 1 `type` and field 2 `uncompressed_page_size`,
    both i32 in short form (header byte 0x15: field-id delta 1, type 5), each a zigzag varint.
    """
    start = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0).data_page_offset
    assert data[start] == 0x15
    _, position = read_varint(data, start + 1)
    assert data[position] == 0x15
    zigzag, end = read_varint(data, position + 1)
    patched = varint(size << 1)  # zigzag of a non-negative i32
    assert len(patched) == end - position - 1, "the patched size must keep the varint's width"
    return data[:position + 1] + patched + data[end:], zigzag >> 1


def zeroed_pages(data: bytes) -> bytes:
    footer = int.from_bytes(data[-8:-4], "little")
    end = len(data) - 8 - footer
    return data[:4] + bytes(end - 4) + data[end:]


def grade_in_fresh_process(files: dict[str, bytes], folder: Path) -> dict[str, dict]:
    paths = []
    for name, data in files.items():
        paths.append(folder / f"{name.replace(' ', '_')}.parquet")
        paths[-1].write_bytes(data)
    limit = (GRADER_ADDRESS_SPACE, GRADER_ADDRESS_SPACE)
    done = subprocess.run([sys.executable, "-c", GRADER, TRUTH, *map(str, paths)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": f"{ROOT}:{TESTS}", "PATH": "/usr/bin:/bin"}, timeout=300,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, limit))
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(files, map(json.loads, done.stdout.splitlines()), strict=True))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    good, huge = parquet(GOOD), one_huge_page()
    lying, true_size = with_page_size(huge, 2**31 - 1)
    assert true_size > 1 << 27  # the page's values (128 MiB) and their 4-byte lengths
    assert with_page_size(lying, true_size) == (huge, 2**31 - 1)  # the lie is that varint and nothing else
    files = {"good": good, "dictionary bomb": dictionary_bomb(), "one huge page": huge,
             "lying page header": lying, "truncated": good[:len(good) // 2],
             "random bytes": np.random.default_rng(0).bytes(4096), "zeroed pages": zeroed_pages(good)}
    for name in ("dictionary bomb", "lying page header"):
        metadata = pq.ParquetFile(io.BytesIO(files[name])).metadata  # the footer checks pass
        declared = sum(metadata.row_group(0).column(c).total_uncompressed_size for c in range(3))
        assert len(files[name]) < 1 << 20 and declared < MAX_UNCOMPRESSED_BYTES and metadata.num_rows <= 1 << 14
    return grade_in_fresh_process(files, tmp_path_factory.mktemp("bombs"))


MEMORY = f"predictions.parquet: reading it needs more than {MEMORY_BYTES} bytes of memory"
NOT_PARQUET = ("predictions.parquet is not a readable Parquet file: Parquet magic bytes not found in footer. "
               "Either the file is corrupted or this is not a parquet file.")
EXPECTED = {
    "good": (None, "answered"),
    "dictionary bomb": (MEMORY, "unparseable"),
    "one huge page": (None, "answered"),
    "lying page header": (MEMORY, "unparseable"),
    "truncated": (NOT_PARQUET, "unparseable"),
    "random bytes": (NOT_PARQUET, "unparseable"),
    "zeroed pages": ("predictions.parquet: unreadable values: Couldn't deserialize thrift: TProtocolException: "
                     "Invalid data\nDeserializing page header failed.\n", "unparseable"),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_file_gets_its_stated_problem_and_outcome(graded, name):
    assert (graded[name]["problem"], graded[name]["outcome"]) == EXPECTED[name]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_grading_a_file_grows_the_harness_s_peak_rss_by_less_than_the_margin(graded, name):
    assert graded[name]["grown_kib"] < MARGIN_KIB
