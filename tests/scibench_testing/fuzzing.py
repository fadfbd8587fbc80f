"""Fuzzing helpers: settings profiles, a per-target case counter, file mutations and the reader contract.

The contract every fuzz target checks: a reader given any bytes either returns tables that pass the
repository contract (`validate_table`) or raises its own `RawFormatError`, naming a file under the
raw folder and a problem (and, for a content error in a text file, the line); never another
exception, never a hang. The answer parser always gives one outcome.

Profiles: `fuzz-quick` (default) runs `QUICK_CASES` derandomized examples per target, so the whole
fuzz folder takes seconds; `fuzz-full` (`SCIBENCH_FUZZ=full`, `make fuzz`) runs `FULL_CASES` in
total, shared equally between `TARGETS`, with fresh random seeds.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from stages.repository import validate_table
from stages.tables import RawFormatError, Table, collect

TARGETS = ("camels_us", "crops_cybench", "crops_khaki", "fluxnet_ch4_daily", "fluxnet_ch4_subdaily",
           "imagery", "hdf_bytes", "hdf_layout", "molecules", "scoring_text", "scoring_json")
FULL_CASES = 10_000
QUICK_CASES = 20
CASE_SECONDS = 30  # one example longer than this is a hang
PROFILE = "fuzz-full" if os.environ.get("SCIBENCH_FUZZ") == "full" else "fuzz-quick"
_COMMON = {"deadline": None, "database": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("fuzz-quick", max_examples=QUICK_CASES, derandomize=True, **_COMMON)
settings.register_profile("fuzz-full", max_examples=math.ceil(FULL_CASES / len(TARGETS)), print_blob=True,
                          **_COMMON)
FUZZ = settings(settings.get_profile(PROFILE))  # the decorator every fuzz test carries
CASES: Counter[str] = Counter()  # target -> examples run (incl. shrinking replays)


class Hang(Exception):
    """One example ran longer than `CASE_SECONDS`."""


def counted(test: Callable) -> Callable:
    """Count every example of a fuzz test (target: its name without `test_`) and bound its time."""
    target = test.__name__.removeprefix("test_")
    if target not in TARGETS:
        raise ValueError(f"fuzz target {target!r} is not in TARGETS")

    @functools.wraps(test)
    def run(*args, **kwargs):
        CASES[target] += 1
        with _time_limit(CASE_SECONDS):
            return test(*args, **kwargs)

    return run


@contextmanager
def _time_limit(seconds: float):
    def expire(signum, frame):
        raise Hang(f"example ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- mutations --------------------------------------------------------------------------------------

TOKENS = ("", " ", "-9999", "-9999.0", "-999.00", "NA", "N/A", "nan", "NaN", "inf", "-inf", "Infinity", "1e400",
          "-1e400", "1e308", "9" * 40, "0", "-0", "-1", "1.5x", "20181301", "20180230", "20180101", "201801010000",
          "00000000", "2018-01-01", "99999999", "x", "é", "\u00a0", "\x00", "\uff11", "$$$$", "M  END", "> <TAG>",
          "#", ",", ";", "\t", "\r", "'", '"', "M", "A:e", "V2000", "V3000", "999", "-2147483649", "0.0,0.0")
SPLIT = b",; \t"


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, text: bool = True) -> bytes:
    """`seed` after 1-4 mutations: bytes, lines (text), tokens (text), truncation, junk, or nothing left."""
    data = seed
    operations = TEXT_OPERATIONS + BYTE_OPERATIONS if text else BYTE_OPERATIONS
    for _ in range(draw(st.integers(1, 4))):
        data = draw(st.sampled_from(operations))(draw, data)
    return data


def _position(draw: st.DrawFn, data: bytes) -> int:
    return draw(st.integers(0, len(data)))


def _truncate(draw: st.DrawFn, data: bytes) -> bytes:
    return data[:_position(draw, data)]


def _set_byte(draw: st.DrawFn, data: bytes) -> bytes:
    if not data:
        return data
    at = draw(st.integers(0, len(data) - 1))
    return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]


def _insert_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    at = _position(draw, data)
    junk = draw(st.one_of(st.binary(min_size=1, max_size=16), st.sampled_from([b"\xff\xfe", b"\xc3", b"\x00" * 8])))
    return data[:at] + junk + data[at:]


def _delete_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    at = _position(draw, data)
    return data[:at] + data[at + draw(st.integers(1, 64)):]


def _junk(draw: st.DrawFn, data: bytes) -> bytes:
    return draw(st.one_of(st.just(b""), st.binary(max_size=256), st.just(data[:8] + bytes(64))))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _line_index(draw: st.DrawFn, lines: list[bytes]) -> int:
    return draw(st.integers(0, min(len(lines) - 1, 12)))  # the header and the first rows matter most


def _delete_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[_line_index(draw, lines)]
    return b"\n".join(lines)


def _duplicate_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    at = _line_index(draw, lines)
    lines.insert(draw(st.integers(0, len(lines))), lines[at])
    return b"\n".join(lines)


def _swap_lines(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    a, b = _line_index(draw, lines), _line_index(draw, lines)
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


def _insert_line(draw: st.DrawFn, data: bytes) -> bytes:
    lines = _lines(data)
    line = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=40))).encode("utf-8", "surrogatepass")
    lines.insert(_line_index(draw, lines), line)
    return b"\n".join(lines)


def _replace_token(draw: st.DrawFn, data: bytes) -> bytes:
    """One field of one of the first lines replaced by a sentinel, a bad date, a huge number or any text."""
    lines = _lines(data)
    at = _line_index(draw, lines)
    line = lines[at]
    bounds = [0] + [i + 1 for i, byte in enumerate(line) if byte in SPLIT] + [len(line) + 1]
    k = draw(st.integers(0, len(bounds) - 2))
    start, stop = bounds[k], bounds[k + 1] - 1
    token = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=12),
                           st.floats(allow_nan=True, allow_infinity=True).map(repr),
                           st.integers(-10**30, 10**30).map(str)))
    lines[at] = line[:start] + token.encode("utf-8", "surrogatepass") + line[stop:]
    return b"\n".join(lines)


def _line_endings(draw: st.DrawFn, data: bytes) -> bytes:
    return draw(st.sampled_from([data.replace(b"\n", b"\r\n"), data.replace(b"\n", b"\r"), data.rstrip(b"\n"),
                                 b"\xef\xbb\xbf" + data]))


BYTE_OPERATIONS = [_truncate, _set_byte, _insert_bytes, _delete_bytes, _junk]
TEXT_OPERATIONS = [_delete_line, _duplicate_line, _swap_lines, _insert_line, _replace_token, _replace_token,
                   _replace_token, _line_endings]


# --- the reader contract -----------------------------------------------------------------------------


def head(path: Path, lines: int) -> bytes:
    """The first `lines` lines of a file (real sample or synthetic), with their line ends."""
    with path.open("rb") as handle:
        return b"".join(handle.readline() for _ in range(lines))


@contextmanager
def raw_folder(files: dict[str, bytes]) -> Iterable[Path]:
    """A fresh temporary raw folder holding `files` (relative path -> bytes)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        root = Path(folder)
        for relative, data in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        yield root


def check_reader(read: Callable[[], Iterable], raw_dir: Path,
                 text_files: Iterable[str] = ()) -> dict[str, Table] | None:
    """Run a reader to the end: valid tables, or a clear RawFormatError (checked, then None)."""
    texts = {str(raw_dir / name) for name in text_files}
    try:
        tables = collect(read())
    except RawFormatError as error:
        check_error(error.path, error.line, error.problem, raw_dir, texts)
        assert str(error).startswith(error.path)
        return None
    for table in tables.values():
        validate_table(table)
    quarantine = tables["quarantine"].frame
    for row in quarantine.itertuples():
        kept = "count" in quarantine and not pd.isna(row.count)  # values kept as nulls, not an error
        check_error(row.file, None if row.line == -1 else row.line, row.problem, raw_dir, set() if kept else texts)
    return tables


def check_error(path: str, line: int | None, problem: str, raw_dir: Path, texts: set[str]) -> None:
    """An error names a file in the raw folder and a problem; a text file's content error its line."""
    assert Path(path) == raw_dir or raw_dir in Path(path).parents, f"error names {path}, outside {raw_dir}"
    assert isinstance(problem, str) and problem.strip(), f"{path}: empty problem"
    if path in texts and line is None:
        assert any(problem.startswith(prefix) for prefix in FILE_LEVEL_PROBLEMS), (
            f"{path}: a content error without a line: {problem}")


# Problems about a whole text file, which rightly name no line.
FILE_LEVEL_PROBLEMS = (
    "no UTC offset for site",  # FLUXNET-CH4 sub-daily file of a site the (mutated) META file lost
)
