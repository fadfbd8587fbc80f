"""Read files only root may read, and find out which host uid the sandbox user is."""

import os

from _probe import SECRETS, report

readable = []
for path in ["/etc/shadow", "/etc/gshadow", "/root/.bash_history", SECRETS["root_secret"]]:
    try:
        open(path, "rb").read(1)
        readable.append(path)
    except OSError:
        pass
host_uid = None
for line in open("/proc/self/uid_map").read().splitlines():
    inside, outside, count = map(int, line.split())
    if inside <= os.getuid() < inside + count:
        host_uid = outside + os.getuid() - inside
report(readable=readable, host_root=host_uid == 0)
