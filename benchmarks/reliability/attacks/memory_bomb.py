"""Hold memory in several processes, each under any per-process limit."""

import os
import time

from _probe import report

children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(300 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(3)
        os._exit(0)
    children.append(pid)
killed = sum(os.WIFSIGNALED(os.waitpid(pid, 0)[1]) for pid in children)
report(some_killed=killed > 0)
