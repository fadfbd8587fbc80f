"""Run `python -m flows.evaluate ...` and SIGKILL it inside its n-th journal append.

`append_fault.py <n> <cut> <flows.evaluate arguments...>`, run from the project directory:
  cut >= 0: the n-th append writes only the first `cut` bytes of its line, then the process dies;
  cut = -1: the n-th append writes its whole line and the process dies before fsync returns.
The fault is injected into `stages.evaluation.journal` alone (its `os` module is wrapped), so everything
else - Prefect, the sandbox, the other worker threads - runs as in a real evaluation.
"""

import os
import runpy
import signal
import sys

sys.path.insert(0, os.getcwd())  # the project's packages, as `python -m` would import them

from stages.evaluation import journal  # noqa: E402

target, cut = int(sys.argv[1]), int(sys.argv[2])
sys.argv = ["flows.evaluate", *sys.argv[3:]]


class FaultyOs:
    """`os` for the journal, dying inside the target append."""

    appends = 0

    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, fd, data):
        FaultyOs.appends += 1
        if FaultyOs.appends == target and cut >= 0:
            os.write(fd, bytes(data)[:cut])
            os.kill(os.getpid(), signal.SIGKILL)
        return os.write(fd, data)

    def fsync(self, fd):
        if FaultyOs.appends == target and cut < 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return os.fsync(fd)


journal.os = FaultyOs()
runpy.run_module("flows.evaluate", run_name="__main__", alter_sys=True)
