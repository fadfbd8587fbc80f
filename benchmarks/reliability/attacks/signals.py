"""Signal and trace processes beyond the sandbox: a same-uid host process, kill(-1), init."""

import ctypes
import os
import signal
import time

from _probe import SECRETS, attempt, report

libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
host_pid = SECRETS["sentinel_pid"]  # a host process of the same uid, outside the sandbox
traced = libc.ptrace(PTRACE_ATTACH, host_pid, None, None) == 0
signalled = attempt(lambda: os.kill(host_pid, signal.SIGKILL)) is None
attempt(lambda: os.kill(1, signal.SIGKILL))  # the sandbox's init: not the program's to signal
time.sleep(0.2)
report(traced=traced, signalled=signalled, init_alive=os.path.exists("/proc/1/stat"))
if os.fork() == 0:
    os.kill(-1, signal.SIGKILL)  # everything this uid may signal: must stay inside the sandbox
    os._exit(0)
time.sleep(5)
