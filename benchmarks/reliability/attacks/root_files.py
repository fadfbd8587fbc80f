"""Read files only root may read (who the program is on the host: see tests/test_sandbox.py)."""

from _probe import SECRETS, report

readable = []
for path in ["/etc/shadow", "/etc/gshadow", "/root/.bash_history", SECRETS["root_secret"]]:
    try:
        open(path, "rb").read(1)
        readable.append(path)
    except OSError:
        pass
report(readable=readable)
