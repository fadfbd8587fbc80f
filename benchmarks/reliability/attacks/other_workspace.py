"""Look for another query's workspace running at the same time (its work/ holds victim-secret)."""

import glob

from _probe import report

found = []
for pattern in ["/proc/[0-9]*/root/workspace/work/*", "/proc/[0-9]*/cwd/work/*", "/tmp/*/work/*",
                "/var/tmp/*/work/*", "/tmp/scibench-ws-*", "/var/tmp/scibench-ws-*"]:
    found += glob.glob(pattern)
report(found=sorted(p for p in found if "victim" in p or "scibench-ws" in p))
