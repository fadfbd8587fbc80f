"""Learn about the host from /proc and /sys: mounts, interfaces, environment, other processes."""

import os
import sys

from _probe import SECRETS, report

texts = []
for path in ["/proc/self/mountinfo", "/proc/self/environ", "/proc/1/cmdline", "/proc/1/environ",
             "/proc/self/cgroup", "/etc/hosts", "/etc/passwd"]:
    try:
        text = open(path, "rb").read().decode(errors="replace")
        texts.append(text.replace(sys.argv[1], ""))  # the facts handed to this program
    except OSError:
        pass
secrets = [SECRETS[k] for k in ("benchmark", "gold", "journal", "decoy_script", "shared", "root_secret")
           if SECRETS.get(k)]
leaked = sorted({s for s in secrets for text in texts if s in text})
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
interfaces = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").read().splitlines()[2:])
report(leaked=leaked, sys_visible=os.path.exists("/sys/class"), interfaces=interfaces,
       few_pids=len(pids) <= 4)
