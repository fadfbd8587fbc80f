"""A small seccomp filter, loaded by bwrap before the program starts (classic BPF, no library).

It refuses what an analysis program never needs and what would widen the kernel surface an agent
can reach, as container runtimes' default profiles do:
- new user namespaces (`unshare`/`clone` with CLONE_NEWUSER): a nested user namespace would give
  the agent capabilities over namespaces of its own. `clone3` passes its flags in memory a filter
  cannot read, so it answers ENOSYS and the C library falls back to `clone`;
- the kernel keyring (`add_key`, `request_key`, `keyctl`): shared by every process of a uid, so
  two sandboxes of the same uid could pass data through it;
- `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_setup`: kernel interfaces behind many
  privilege escalations, of no use to data analysis.
Syscalls of another ABI (32-bit or x32 on x86_64) are refused as a whole.
"""

from __future__ import annotations

import errno
import platform
import struct

CLONE_NEWUSER = 0x10000000

# (audit arch, syscall numbers) per machine; numbers from the kernel's syscall tables.
_ARCHES = {
    "x86_64": (0xC000003E, {"unshare": 272, "clone": 56, "clone3": 435, "add_key": 248,
                            "request_key": 249, "keyctl": 250, "bpf": 321, "perf_event_open": 298,
                            "userfaultfd": 323, "io_uring_setup": 425}),
    "aarch64": (0xC00000B7, {"unshare": 97, "clone": 220, "clone3": 435, "add_key": 217,
                             "request_key": 218, "keyctl": 219, "bpf": 280, "perf_event_open": 241,
                             "userfaultfd": 282, "io_uring_setup": 425}),
}
_REFUSED = ("add_key", "request_key", "keyctl", "bpf", "perf_event_open", "userfaultfd",
            "io_uring_setup")
X32_SYSCALL_BIT = 0x40000000

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS, _JEQ_K, _JSET_K, _JGE_K, _RET_K = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0 = 0, 4, 16  # struct seccomp_data, little-endian


class SeccompUnsupported(RuntimeError):
    """No syscall table is known for this machine."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _errno(value: int) -> bytes:
    return _op(_RET_K, _ERRNO | value)


def filter_program(machine: str | None = None) -> bytes:
    """The filter as bwrap's `--seccomp FD` expects it: `struct sock_filter` records.

    Raises:
        SeccompUnsupported: `machine` (default: this one) has no known syscall table.
    """
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        raise SeccompUnsupported(f"no seccomp syscall table for {machine}")
    arch, numbers = _ARCHES[machine]
    refused = [numbers[name] for name in _REFUSED]
    body = [_op(_LD_W_ABS, _OFFSET_NR)]
    if machine == "x86_64":
        body.append(_op(_JGE_K, X32_SYSCALL_BIT, 0, 1))
        body.append(_errno(errno.ENOSYS))
    for number in refused:
        body += [_op(_JEQ_K, number, 0, 1), _errno(errno.EPERM)]
    body += [_op(_JEQ_K, numbers["clone3"], 0, 1), _errno(errno.ENOSYS)]
    # unshare and clone: refuse when arg0 (the flags) asks for a new user namespace.
    body += [
        _op(_JEQ_K, numbers["unshare"], 1, 0),
        _op(_JEQ_K, numbers["clone"], 0, 3),
        _op(_LD_W_ABS, _OFFSET_ARG0),
        _op(_JSET_K, CLONE_NEWUSER, 0, 1),
        _errno(errno.EPERM),
        _op(_RET_K, _ALLOW),
    ]
    head = [_op(_LD_W_ABS, _OFFSET_ARCH), _op(_JEQ_K, arch, 1, 0), _errno(errno.ENOSYS)]
    return b"".join(head + body)
