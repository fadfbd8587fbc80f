"""An agent that answers some queries at once and blocks on the others.

`blocker.py <workspace> <word> [<word> ...]`: a query whose prompt contains one of the words is
answered at once; any other blocks far longer than a test waits, so only the wall-clock timeout
or a kill ends it. The choice depends only on what the agent sees (its prompt), never on state
shared between runs.
"""

import json
import sys
import time
from pathlib import Path

workspace, words = Path(sys.argv[1]), sys.argv[2:]
prompt = (workspace / "prompt.md").read_text()
if not any(word in prompt for word in words):
    print("blocking", flush=True)
    time.sleep(24 * 3600)
(workspace / "work" / "answer.json").write_text(json.dumps({"metrics": {}}))
print("answered")
