"""Fill every writable place, and try the read-only ones."""

from _probe import report

written = {}
for path in ["work/fill", "/tmp/fill", "/dev/shm/fill", "/var/tmp/fill2", "/workspace/fill",
             "/fill", "/agent/fill", "/etc/fill", "data/fill"]:
    mib = 0
    try:
        with open(path, "wb") as handle:
            while mib < 4096:
                handle.write(b"\0" * (1 << 20))
                handle.flush()
                mib += 1
    except OSError:
        pass
    written[path] = mib
report(written_mib=written)
