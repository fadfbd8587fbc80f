"""Make work/answer.json something other than a plain file the program wrote: argv[2] says what."""

import os
import sys

from _probe import SECRETS

kind = sys.argv[2]
answer = "work/answer.json"
if kind == "symlink_absolute":
    os.symlink(SECRETS["gold"], answer)
elif kind == "symlink_proc":
    os.symlink("/proc/self/environ", answer)
elif kind == "symlink_relative":
    os.symlink("../prompt.md", answer)
elif kind == "symlink_cwd":
    os.symlink("/proc/self/cwd/prompt.md", answer)
elif kind == "hardlink":
    open("work/real.json", "w").write('{"metrics": {"nse": 0.9}}')
    os.link("work/real.json", answer)
elif kind == "hardlink_data":
    os.link("data/x.csv", answer)
elif kind == "fifo":
    os.mkfifo(answer)
elif kind == "directory":
    os.mkdir(answer)
elif kind == "huge":
    with open(answer, "w") as handle:
        handle.write('{"metrics": {"nse": 0.9}}')
        for _ in range(1023):  # 1 GB, just under the per-file limit
            handle.write(" " * (1 << 20))
elif kind == "not_utf8":
    open(answer, "wb").write(b'\xff\xfe{"metrics": {}}')
elif kind == "malformed":
    open(answer, "w").write('{"metrics": {"nse": NaN, "kge": [1e999]')
