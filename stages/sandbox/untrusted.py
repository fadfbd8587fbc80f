"""Read what a sandboxed program left in its `work/` as untrusted input.

An agent controls every byte of `work/`: a name may be a symlink (to the gold, to the harness's
own `/proc/self/environ`), a hard link, a FIFO that never yields, a device, a directory, or a file
far larger than anything the harness should hold. A file is read only when it is a regular file
with one link on the work directory's own filesystem, opened relative to that directory with
`O_NOFOLLOW` (no path is resolved by name twice), and at most `cap + 1` bytes are read. Every
`OSError` becomes a stated problem, never an exception.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Collected:
    """One file taken from `work/`: its bytes, or why it was not taken."""

    data: bytes | None
    problem: str | None  # None when `data` holds the whole file
    owner_uid: int | None = field(default=None, compare=False)  # the host uid that wrote it

    @property
    def missing(self) -> bool:
        """The program wrote no such file."""
        return self.data is None and self.problem == "missing"


MISSING = Collected(None, "missing")


def collect(work_fd: int, name: str, cap: int) -> Collected:
    """Read `name` (one path component) under the open directory `work_fd`, at most `cap` bytes."""
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"not a plain file name: {name!r}")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=work_fd)
    except FileNotFoundError:
        return MISSING
    except OSError as error:  # ELOOP: a symlink; EACCES, ENXIO (a socket), ...
        return Collected(None, f"cannot open {name}: {_describe(error)}")
    try:
        info, home = os.fstat(fd), os.fstat(work_fd)
        if not stat.S_ISREG(info.st_mode):
            return Collected(None, f"{name} is not a regular file ({_kind(info.st_mode)})")
        if info.st_nlink != 1:
            return Collected(None, f"{name} has {info.st_nlink} hard links")
        if info.st_dev != home.st_dev:
            return Collected(None, f"{name} is on another filesystem")
        data = _read_at_most(fd, cap + 1)
    except OSError as error:
        return Collected(None, f"cannot read {name}: {_describe(error)}")
    finally:
        os.close(fd)
    if len(data) > cap:
        return Collected(None, f"{name} is larger than {cap} bytes", info.st_uid)
    return Collected(data, None, info.st_uid)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _describe(error: OSError) -> str:
    return os.strerror(error.errno) if error.errno else str(error)


def _kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket",
             stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISLNK: "a symlink"}
    return next((label for test, label in kinds.items() if test(mode)), "not a regular file")
