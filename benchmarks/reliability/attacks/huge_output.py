"""Print 400 MB to stdout as fast as possible."""

import sys

chunk = "x" * (1 << 20)
for _ in range(400):
    sys.stdout.write(chunk)
