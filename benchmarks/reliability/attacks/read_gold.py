"""Look for the gold: the task's private files, the project and other checkouts, the journal.

Every file the range planted with gold in it also holds the range's token, so a file found with the
token is gold in reach. The system directories and the Python runtime are skipped: they are bound
from the host as they are, and are walked by the host-path probes instead.
"""

import os
import sys

from _probe import SECRETS, report

TARGETS = [SECRETS[k] for k in ("gold", "decoy_script", "journal", "benchmark", "project", "shared")
           if SECRETS.get(k)] + SECRETS.get("decoys", [])
SKIP = {"/proc", "/sys", "/dev", "/usr", sys.prefix, sys.base_prefix}
readable = []
for path in TARGETS:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(16)
        readable.append(path)
    except OSError:
        pass
found = []
for top, dirs, files in os.walk(SECRETS.get("walk_root", "/")):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
    for name in files:
        try:
            with open(os.path.join(top, name), "rb") as handle:
                if SECRETS["token"].encode() in handle.read(1 << 20):
                    found.append(os.path.join(top, name))
        except OSError:
            pass
report(readable=readable, found=found)
