"""A hostile agent: tries to read the benchmark's private files and to reach the network.

It reports what happened on stdout and writes a well-formed but unscorable answer.
"""

import glob
import json
import socket
import sys
from pathlib import Path

project = Path(sys.argv[2])
report = {}
found = glob.glob(str(project / "processed/benchmark/tasks/*/private/*"))
report["private_files_visible"] = len(found)
try:
    (project / "params.yaml").read_text()
    report["project"] = "readable"
except OSError as error:
    report["project"] = type(error).__name__
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=2)
    report["socket"] = "connected"
except OSError as error:
    report["socket"] = type(error).__name__
print("SNOOP " + json.dumps(report, sort_keys=True))
Path(sys.argv[1], "work", "answer.json").write_text(json.dumps({"notes": report}))
