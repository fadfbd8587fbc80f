"""Ignore SIGTERM, leave a detached daemon behind, and never finish."""

import os
import signal
import sys
import time

from _probe import SECRETS

signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c",
                                  "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                  "while True: time.sleep(1)", SECRETS["token"]])
    os._exit(0)
print("spinning", flush=True)
while True:
    time.sleep(0.1)
