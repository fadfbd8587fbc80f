"""Exit at once, leaving a daemon that writes the answer a second later."""

import os
import time

if os.fork() == 0:
    os.setsid()
    time.sleep(1)
    with open("work/answer.json", "w") as handle:
        handle.write('{"metrics": {"nse": 0.99}}')
    os._exit(0)
