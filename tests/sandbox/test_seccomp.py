"""Specification of stages/sandbox/seccomp.py: the exact filter, what it answers, and the kernel's view."""

from __future__ import annotations

import errno
import json
import platform
import struct
import subprocess
import sys
import textwrap

import pytest

from stages.sandbox.seccomp import SeccompUnsupported, filter_program

X86_64, AARCH64 = 0xC000003E, 0xC00000B7
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW = 0x7FFF0000
EPERM, ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def instructions(program: bytes) -> list[tuple[int, int, int, int]]:
    """`struct sock_filter` records as (code, jt, jf, k)."""
    return list(struct.iter_unpack("=HBBI", program))


def refused_then(numbers: list[int]) -> list[tuple[int, int, int, int]]:
    return [op for number in numbers for op in ((JEQ, 0, 1, number), (RET, 0, 0, EPERM))]


def test_the_x86_64_program_instruction_by_instruction() -> None:
    assert instructions(filter_program("x86_64")) == [
        (LD, 0, 0, 4), (JEQ, 1, 0, X86_64), (RET, 0, 0, ENOSYS),  # another ABI
        (LD, 0, 0, 0),
        (JGE, 0, 1, 0x40000000), (RET, 0, 0, ENOSYS),  # x32
        *refused_then([248, 249, 250, 321, 298, 323, 425]),
        (JEQ, 0, 1, 435), (RET, 0, 0, ENOSYS),  # clone3
        (JEQ, 1, 0, 272), (JEQ, 0, 3, 56),  # unshare, clone
        (LD, 0, 0, 16), (JSET, 0, 1, CLONE_NEWUSER), (RET, 0, 0, EPERM),
        (RET, 0, 0, ALLOW),
    ]


def test_the_aarch64_program_has_no_x32_check() -> None:
    assert instructions(filter_program("aarch64")) == [
        (LD, 0, 0, 4), (JEQ, 1, 0, AARCH64), (RET, 0, 0, ENOSYS),
        (LD, 0, 0, 0),
        *refused_then([217, 218, 219, 280, 241, 282, 425]),
        (JEQ, 0, 1, 435), (RET, 0, 0, ENOSYS),
        (JEQ, 1, 0, 97), (JEQ, 0, 3, 220),
        (LD, 0, 0, 16), (JSET, 0, 1, CLONE_NEWUSER), (RET, 0, 0, EPERM),
        (RET, 0, 0, ALLOW),
    ]


def test_the_default_machine_is_this_one() -> None:
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip(f"no syscall table for {platform.machine()}")
    assert filter_program() == filter_program(platform.machine())


@pytest.mark.parametrize("machine", ["riscv64", "i686", ""])
def test_an_unknown_machine_raises(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")  # what "" falls back to
    with pytest.raises(SeccompUnsupported) as raised:
        filter_program(machine)
    assert str(raised.value) == f"no seccomp syscall table for {machine or 'riscv64'}"


def evaluate(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """Run the classic BPF program on one `struct seccomp_data` and return its action."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    ops, pc, acc = instructions(program), 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        pc += 1
        if code == LD:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == RET:
            return k
        else:
            taken = {JEQ: acc == k, JGE: acc >= k, JSET: bool(acc & k)}[code]
            pc += jt if taken else jf


@pytest.mark.parametrize(("machine", "arch", "calls"), [
    ("x86_64", X86_64, {"getpid": 39, "read": 0, "clone": 56, "unshare": 272, "keyctl": 250, "add_key": 248,
                        "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
                        "io_uring_setup": 425, "clone3": 435}),
    ("aarch64", AARCH64, {"getpid": 172, "read": 63, "clone": 220, "unshare": 97, "keyctl": 219, "add_key": 217,
                          "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                          "io_uring_setup": 425, "clone3": 435}),
])
def test_what_the_filter_answers(machine: str, arch: int, calls: dict[str, int]) -> None:
    program = filter_program(machine)
    answers = {name: evaluate(program, arch, nr) for name, nr in calls.items()}
    assert answers == {"getpid": ALLOW, "read": ALLOW, "clone": ALLOW, "unshare": ALLOW, "keyctl": EPERM,
                       "add_key": EPERM, "request_key": EPERM, "bpf": EPERM, "perf_event_open": EPERM,
                       "userfaultfd": EPERM, "io_uring_setup": EPERM, "clone3": ENOSYS}
    for name in ("clone", "unshare"):
        assert evaluate(program, arch, calls[name], CLONE_NEWUSER) == EPERM
        assert evaluate(program, arch, calls[name], CLONE_NEWUSER | CLONE_NEWNS) == EPERM
        assert evaluate(program, arch, calls[name], CLONE_NEWNS) == ALLOW
    # The flags are only looked at for unshare and clone.
    assert evaluate(program, arch, calls["getpid"], CLONE_NEWUSER) == ALLOW
    other = AARCH64 if arch == X86_64 else X86_64
    assert evaluate(program, other, calls["getpid"]) == ENOSYS
    assert evaluate(program, 0x40000003, calls["getpid"]) == ENOSYS  # i386


def test_x32_syscalls_are_refused_as_a_whole() -> None:
    program = filter_program("x86_64")
    assert evaluate(program, X86_64, 0x40000000 | 39) == ENOSYS
    assert evaluate(program, X86_64, 0x3FFFFFFF) == ALLOW
    assert evaluate(filter_program("aarch64"), AARCH64, 0x40000000 | 172) == ALLOW


# Loads the filter on itself the way bwrap does, then reports what each call returns.
LOADER = textwrap.dedent("""
    import ctypes, json, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    program = sys.stdin.buffer.read()

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
    assert libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0, ctypes.get_errno()  # SECCOMP_MODE_FILTER

    def call(nr, *args):
        ctypes.set_errno(0)
        result = libc.syscall(nr, *args)
        if result == 0 and nr == NR["clone"]:
            os._exit(0)  # a child made by a filter that let clone through
        return "ok" if result >= 0 else os.strerror(ctypes.get_errno())

    NR = json.loads(sys.argv[1])
    print(json.dumps({
        "getpid": libc.syscall(NR["getpid"]) == os.getpid(),
        "keyctl": call(NR["keyctl"], 0, ctypes.c_long(-3), 0),
        "add_key": call(NR["add_key"], b"user", b"k", b"v", 1, ctypes.c_long(-2)),  # the process keyring
        "bpf": call(NR["bpf"], 0, None, 0),
        "userfaultfd": call(NR["userfaultfd"], 0),
        "io_uring_setup": call(NR["io_uring_setup"], 1, None),
        "clone3": call(NR["clone3"], None, 0),
        "clone(CLONE_NEWUSER)": call(NR["clone"], 0x10000000 | 17, 0, 0, 0, 0),
        "unshare(0)": call(NR["unshare"], 0),
        "unshare(CLONE_NEWUSER)": call(NR["unshare"], 0x10000000),  # last: it would change who we are
    }))
""")

NUMBERS = {
    "x86_64": {"getpid": 39, "unshare": 272, "clone": 56, "clone3": 435, "keyctl": 250, "add_key": 248,
               "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425},
    "aarch64": {"getpid": 172, "unshare": 97, "clone": 220, "clone3": 435, "keyctl": 219, "add_key": 217,
                "bpf": 280, "userfaultfd": 282, "io_uring_setup": 425},
}


@pytest.mark.skipif(platform.machine() not in NUMBERS, reason=f"no syscall table for {platform.machine()}")
def test_the_kernel_enforces_the_filter_in_a_process_that_loads_it() -> None:
    done = subprocess.run([sys.executable, "-c", LOADER, json.dumps(NUMBERS[platform.machine()])],
                          input=filter_program(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == {
        "getpid": True,
        "keyctl": "Operation not permitted",
        "add_key": "Operation not permitted",
        "bpf": "Operation not permitted",
        "userfaultfd": "Operation not permitted",
        "io_uring_setup": "Operation not permitted",
        "clone3": "Function not implemented",
        "clone(CLONE_NEWUSER)": "Operation not permitted",
        "unshare(0)": "ok",
        "unshare(CLONE_NEWUSER)": "Operation not permitted",
    }
