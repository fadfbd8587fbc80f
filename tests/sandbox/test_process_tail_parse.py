"""Specification of stages/sandbox/process.py: bounded tails, and what `_parse` reads from the pipes.

A `Tail` keeps the last bytes of an output and counts all of them, holding at most twice its size;
`_parse` reads the launcher's report (its start byte and `done <status>` line) and bwrap's info (the
sandbox's pid), and leaves the state as it was until a line or document is complete.
"""

from __future__ import annotations

import pytest

from stages.sandbox.process import Tail, Watch, _parse


def test_a_tail_keeps_the_last_bytes_and_counts_all() -> None:
    tail = Tail(10)
    tail.add(b"abcdefgh")
    assert (tail.text(), tail.total) == ("abcdefgh", 8)
    tail.add(b"ijklmnop")
    assert (tail.text(), tail.total) == ("ghijklmnop", 16)
    tail.add(b"0123456789ABCDEF")
    assert (tail.text(), tail.total) == ("6789ABCDEF", 32)
    tail.add(b"")
    assert (tail.text(), tail.total) == ("6789ABCDEF", 32)


def test_a_tail_of_one_byte_chunks() -> None:
    tail = Tail(3)
    for byte in b"abcdefg":
        tail.add(bytes([byte]))
    assert (tail.text(), tail.total) == ("efg", 7)


def test_a_tail_holds_at_most_twice_its_size() -> None:
    tail = Tail(100)
    for i in range(1000):
        tail.add(bytes([65 + i % 26]) * 37)
        assert len(tail._buffer) <= 200
    assert tail.total == 37_000
    assert tail.text() == "".join(chr(65 + i % 26) * 37 for i in range(997, 1000))[-100:]


def test_a_chunk_larger_than_the_tail_keeps_only_its_end_in_memory() -> None:
    tail = Tail(100)
    tail.add(b"x" * 10_000 + b"y" * 100)
    assert (len(tail._buffer), tail.text(), tail.total) == (100, "y" * 100, 10_100)


def test_the_default_tail_is_twenty_thousand_bytes() -> None:
    tail = Tail()
    tail.add(b"a" * 5000 + b"b" * 30_000)
    assert (tail.size, tail.text(), tail.total) == (20_000, "b" * 20_000, 35_000)


def test_undecodable_bytes_are_replaced() -> None:
    tail = Tail(4)
    tail.add("é".encode() + b"\xffok")  # the tail starts inside the two-byte é
    assert tail.text() == "\ufffd\ufffdok"


def parsed(report: bytes = b"", info: bytes = b"", **known: object) -> Watch:
    state = Watch(report=bytearray(report), info=bytearray(info), **known)  # type: ignore[arg-type]
    _parse(state)
    return state


@pytest.mark.parametrize(("report", "started", "status"), [
    (b"", False, None),
    (b"x", True, None),
    (b"xdone 3\n", True, 3),
    (b"xdone 0\n", True, 0),
    (b"xdone 137\n", True, 137),
    (b"xdone 3", True, None),  # the line is not complete yet
    (b"xdone", True, None),
    (b"xdone \n", True, None),
    (b"xdone three\n", True, None),
    (b"xexit 3\n", True, None),
    (b"done 3\n", False, None),  # no start byte: setup failed, whatever the output says
    (b"ydone 3\n", False, None),
])
def test_the_launcher_report(report: bytes, started: bool, status: int | None) -> None:
    state = parsed(report)
    assert (state.started, state.done_status) == (started, status)


@pytest.mark.parametrize(("info", "pid"), [
    (b'{\n    "child-pid": 4242\n}\n', 4242),
    (b'{"child-pid": 2}', 2),
    (b'{"child-pid": 1}', None),  # never the harness's own init
    (b'{"child-pid": 0}', None),
    (b'{"child-pid": -5}', None),
    (b'{"child-pid": "4242"}', None),
    (b'{"child-pid": 42.0}', None),
    (b'{"child-pid": true}', None),
    (b'{"other": 4242}', None),
    (b'{\n    "child-pid": 4242', None),  # not complete yet
    (b'{"child-pid": 4242} trailing}', None),
    (b"", None),
])
def test_the_bwrap_info(info: bytes, pid: int | None) -> None:
    assert parsed(info=info).sandbox_pid == pid


def test_a_known_sandbox_pid_is_kept() -> None:
    assert parsed(info=b'{"child-pid": 4242}', sandbox_pid=77).sandbox_pid == 77


def test_no_report_and_no_info_leave_the_state_as_it_was() -> None:
    state = parsed()
    assert (state.started, state.done_status, state.sandbox_pid) == (False, None, None)
