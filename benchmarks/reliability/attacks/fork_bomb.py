"""Fork until something stops it; the children stay alive."""

import os
import time

from _probe import report

count = 0
try:
    while count < 100_000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        count += 1
except OSError:
    pass
report(stopped=count < 100_000)
