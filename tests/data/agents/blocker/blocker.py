"""An agent that answers some queries at once and blocks on the others.

`blocker.py <workspace> <word>`: a query whose prompt contains <word> is answered at once; any
other blocks far longer than a test waits, so only the wall-clock timeout or a kill ends it. The
choice depends only on what the agent sees (its prompt), never on state shared between runs.
"""

import json
import sys
import time
from pathlib import Path

workspace, word = Path(sys.argv[1]), sys.argv[2]
if word not in (workspace / "prompt.md").read_text():
    print("blocking", flush=True)
    time.sleep(24 * 3600)
(workspace / "work" / "answer.json").write_text(json.dumps({"metrics": {}}))
print("answered")
