"""A well-behaved program: the check that the harness's next run after an attack is clean."""

import json

print(open("prompt.md").read().strip(), open("data/x.csv").read().split())
json.dump({"metrics": {"ok": 1}}, open("work/answer.json", "w"))
