"""Specification of stages/sandbox/untrusted.py: every kind of entry an agent can leave in work/."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stages.sandbox.untrusted import MISSING, Collected, _describe, _kind, collect


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def work_fd(work: Path) -> Iterator[int]:
    fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_a_regular_file_is_read_whole_with_its_owner(work: Path, work_fd: int) -> None:
    (work / "answer.json").write_bytes(b'{"mean": 1.5}')
    collected = collect(work_fd, "answer.json", 100)
    assert collected == Collected(b'{"mean": 1.5}', None)
    assert collected.owner_uid == os.getuid()
    assert not collected.missing


def collect_within_deadline(work_fd: int, name: str, cap: int) -> Collected:
    """`collect` in a thread, failing the test instead of hanging it."""
    results: list[Collected] = []
    reader = threading.Thread(target=lambda: results.append(collect(work_fd, name, cap)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert results, f"collect did not return within 30 s on {name}"
    return results[0]


def test_an_empty_file_is_read_as_no_bytes(work: Path, work_fd: int) -> None:
    (work / "answer.json").write_bytes(b"")
    assert collect_within_deadline(work_fd, "answer.json", 100) == Collected(b"", None)


def test_a_missing_file_is_missing(work_fd: int) -> None:
    collected = collect(work_fd, "answer.json", 100)
    assert collected == MISSING == Collected(None, "missing")
    assert collected.missing
    assert collected.owner_uid is None


def test_missing_means_no_file_not_any_problem() -> None:
    assert not Collected(None, "answer.json is not a regular file (a FIFO)").missing
    assert not Collected(b"missing", None).missing
    assert not Collected(b"", "missing").missing


def test_a_file_of_exactly_the_cap_is_taken_and_one_byte_more_is_refused(work: Path, work_fd: int) -> None:
    (work / "fits").write_bytes(b"0123456789")
    (work / "big").write_bytes(b"0123456789A")
    assert collect(work_fd, "fits", 10) == Collected(b"0123456789", None)
    refused = collect(work_fd, "big", 10)
    assert refused == Collected(None, "big is larger than 10 bytes")
    assert refused.owner_uid == os.getuid()


def test_a_file_of_several_read_chunks_is_read_whole(work: Path, work_fd: int) -> None:
    data = bytes(range(256)) * (10 << 10)  # 2.5 MiB: three reads of at most 1 MiB
    (work / "big").write_bytes(data)
    assert collect(work_fd, "big", 3 << 20) == Collected(data, None)
    assert collect(work_fd, "big", len(data)) == Collected(data, None)
    assert collect(work_fd, "big", len(data) - 1) == Collected(None, f"big is larger than {len(data) - 1} bytes")


def test_no_more_than_the_cap_and_one_byte_is_read_at_most_a_mebibyte_at_a_time(
    work: Path, work_fd: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "huge").write_bytes(bytes(5 << 20))
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        reads.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting_read)
    cap = (3 << 19) + 5  # 1.5 MiB and 5 bytes
    assert collect(work_fd, "huge", cap) == Collected(None, f"huge is larger than {cap} bytes")
    assert reads == [1 << 20, cap + 1 - (1 << 20)]


@pytest.mark.parametrize("target", ["/etc/passwd", "answer.txt"], ids=["absolute", "relative"])
def test_a_symlink_is_not_followed(work: Path, work_fd: int, target: str) -> None:
    (work / "answer.txt").write_text("gold")
    (work / "answer.json").symlink_to(target)
    assert collect(work_fd, "answer.json", 100) == Collected(
        None, "cannot open answer.json: Too many levels of symbolic links")


def test_a_dangling_symlink_is_a_symlink_not_a_missing_file(work: Path, work_fd: int) -> None:
    (work / "answer.json").symlink_to("nowhere")
    assert collect(work_fd, "answer.json", 100) == Collected(
        None, "cannot open answer.json: Too many levels of symbolic links")


def test_a_hard_link_is_refused(work: Path, work_fd: int, tmp_path: Path) -> None:
    (tmp_path / "gold.json").write_text("gold")
    os.link(tmp_path / "gold.json", work / "answer.json")
    assert collect(work_fd, "answer.json", 100) == Collected(None, "answer.json has 2 hard links")
    os.link(tmp_path / "gold.json", tmp_path / "third")
    assert collect(work_fd, "answer.json", 100) == Collected(None, "answer.json has 3 hard links")


def test_a_fifo_without_a_writer_does_not_block(work: Path, work_fd: int) -> None:
    fifo = work / "answer.json"
    os.mkfifo(fifo)
    results: list[Collected] = []
    reader = threading.Thread(target=lambda: results.append(collect(work_fd, "answer.json", 100)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # opened blocking: a writer lets the open (and the test) finish
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=30)
        pytest.fail("collect blocked on a FIFO with no writer")
    assert results == [Collected(None, "answer.json is not a regular file (a FIFO)")]


def test_a_directory_is_refused(work: Path, work_fd: int) -> None:
    (work / "answer.json").mkdir()
    assert collect(work_fd, "answer.json", 100) == Collected(None, "answer.json is not a regular file (a directory)")


def test_a_socket_cannot_be_opened(work: Path, work_fd: int, tmp_path: Path) -> None:
    # AF_UNIX paths are short: bind from inside work/ with a relative name.
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind("answer.json")
            assert collect(work_fd, "answer.json", 100) == Collected(
                None, "cannot open answer.json: No such device or address")
    finally:
        os.chdir(cwd)


def test_a_character_device_is_refused() -> None:
    dev = os.open("/dev", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert collect(dev, "null", 100) == Collected(None, "null is not a regular file (a character device)")
    finally:
        os.close(dev)


def test_a_regular_file_that_fails_to_read_is_a_problem() -> None:
    # /proc/self/mem is a regular file with one link whose read at offset 0 fails with EIO.
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert collect(proc, "mem", 100) == Collected(None, "cannot read mem: Input/output error")
    finally:
        os.close(proc)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install -y bubblewrap)")
def test_a_file_mounted_from_another_filesystem_is_refused(tmp_path: Path) -> None:
    # Inside a mount namespace, work/ is a tmpfs and answer.json a file bound from the host's tmp.
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "gold.json").write_text("gold")
    code = textwrap.dedent(f"""
        import os
        from stages.sandbox.untrusted import collect
        fd = os.open({str(work)!r}, os.O_RDONLY)
        print(collect(fd, "answer.json", 100).problem)
    """)
    root = str(Path(__file__).resolve().parents[2])
    # The same file read from its own directory is taken: it is the mount that refuses it.
    own = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert collect(own, "gold.json", 100) == Collected(b"gold", None)
    finally:
        os.close(own)
    done = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(work),
         "--bind", str(tmp_path / "gold.json"), str(work / "answer.json"),
         "--setenv", "PYTHONPATH", root, sys.executable, "-c", code],
        capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr) == ("answer.json is on another filesystem\n", "")


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "/etc/passwd", "../gold.json"])
def test_a_name_that_is_not_one_plain_component_is_a_caller_error(work_fd: int, name: str) -> None:
    with pytest.raises(ValueError) as raised:
        collect(work_fd, name, 100)
    assert str(raised.value) == f"not a plain file name: {name!r}"


def test_names_with_dots_inside_are_plain(work: Path, work_fd: int) -> None:
    (work / "..answer").write_bytes(b"1")
    (work / "a.json").write_bytes(b"2")
    assert collect(work_fd, "..answer", 10) == Collected(b"1", None)
    assert collect(work_fd, "a.json", 10) == Collected(b"2", None)


def test_an_error_is_described_by_its_errno_or_else_its_text() -> None:
    assert _describe(OSError(2, "ignored")) == "No such file or directory"
    assert _describe(OSError("no errno here")) == "no errno here"


@pytest.mark.parametrize(("mode", "label"), [
    (stat.S_IFDIR, "a directory"),
    (stat.S_IFIFO, "a FIFO"),
    (stat.S_IFSOCK, "a socket"),
    (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"),
    (stat.S_IFLNK, "a symlink"),
    (0, "not a regular file"),
])
def test_each_kind_of_entry_is_named(mode: int, label: str) -> None:
    assert _kind(mode | 0o644) == label
