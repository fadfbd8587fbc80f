"""Become someone else: nested user namespaces, setuid binaries, setuid(0), mount, keyrings."""

import ctypes
import os
import platform
import subprocess

from _probe import attempt, report

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
SYS_ADD_KEY = {"x86_64": 248, "aarch64": 217}[platform.machine()]


def must(result):
    """Raise the C call's errno when it failed."""
    if result != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def command(*argv):
    """An attempt that runs a command and fails unless it exits 0."""
    def run():
        done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(done.returncode)
    return run


attempts = {
    "unshare_user": lambda: must(libc.unshare(CLONE_NEWUSER)),
    "unshare_mount": lambda: must(libc.unshare(CLONE_NEWNS)),
    "unshare_cmd": command("unshare", "-Ur", "id"),
    "setuid_0": lambda: os.setuid(0),
    "mount_tmpfs": lambda: must(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
    "add_key": lambda: must(0 if libc.syscall(SYS_ADD_KEY, b"user", b"k", b"v", 1, -3) > 0 else -1),
    "su": command("su", "-c", "id", "root"),
    "chroot": lambda: os.chroot("/tmp"),
}
report(succeeded=[name for name, action in attempts.items() if attempt(action) is None])
