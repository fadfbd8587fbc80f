"""Write, rename and chmod outside work/: data, the prompt, system and runtime directories."""

import os
import sys

from _probe import attempt, report

targets = ["/workspace/x", "/workspace/data/x", "/workspace/prompt.md", "/etc/x", "/usr/x", "/agent/x",
           "/var/x", "/x", "/proc/x", "/dev/x", os.path.join(sys.prefix, "x")]
done = [p for p in targets if attempt(lambda p=p: open(p, "a").close()) is None]
done += ["rename data"] * (attempt(lambda: os.rename("data/x.csv", "data/y.csv")) is None)
done += ["chmod data"] * (attempt(lambda: os.chmod("data/x.csv", 0o777)) is None)
done += ["utime prompt"] * (attempt(lambda: os.utime("prompt.md", (0, 0))) is None)
report(done=done)
