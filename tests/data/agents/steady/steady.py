"""A steady agent for crash tests: waits as long as its prompt says, then answers.

`steady.py <workspace>`: the prompt's `SLEEP <seconds>` line sets the wait; it prints a few KB (so
that a journal record is a few KB long, and a write cut short leaves a real partial line) and
writes the query's number as its answer.
"""

import json
import re
import sys
import time
from pathlib import Path

workspace = Path(sys.argv[1])
prompt = (workspace / "prompt.md").read_text()
time.sleep(float(re.search(r"^SLEEP (\S+)$", prompt, re.M).group(1)))
number = int(re.search(r"^QUERY (\d+)$", prompt, re.M).group(1))
print(f"query {number}: " + "steady " * 500)
(workspace / "work" / "answer.json").write_text(json.dumps({"answer": number}))
