"""Defensive floor: zeros and -1 sentinels in the declared shape (standalone, stdlib only).

An agent that games the format this way must score exactly 0 through the realistic filter.
"""

import json
import sys
from pathlib import Path

from prompt_blocks import read_block

SENTINELS = {"number": -1, "boolean": -1, "category": "-1", "list": [-1], "coordinates": [-1, -1]}


def main() -> None:
    """Read prompt.md of the workspace given as argument and write work/answer.json."""
    workspace = Path(sys.argv[1])
    schema = read_block((workspace / "prompt.md").read_text(), "Answer format")
    if schema["kind"] == "metrics":
        answer = {"metrics": {m["name"]: 0.0 for m in schema["metrics"]}}
    else:
        answer = {"answer": SENTINELS[schema["format"]]}
    (workspace / "work" / "answer.json").write_text(json.dumps(answer))


if __name__ == "__main__":
    main()
