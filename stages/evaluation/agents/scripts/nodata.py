"""NoDataGuess: answer from the prompt alone (standalone: it runs in the sandbox, stdlib only).

For metrics it reports each metric's declared no-skill value (0 when none is declared): what a model
that learned nothing from the data would score. For a hypothesis it guesses the uninformed prior:
the middle of the valid range, the first category, `false`, an empty list.
"""

import json
import sys
from pathlib import Path

from prompt_blocks import read_block


def guess(schema: dict) -> dict:
    """The no-data answer for an answer-format schema."""
    if schema["kind"] == "metrics":
        return {"metrics": {m["name"]: m.get("no_skill") or 0.0 for m in schema["metrics"]}}
    low, high = schema.get("valid_range") or (None, None)
    priors = {
        "number": (low + high) / 2 if low is not None and high is not None else 0.0,
        "boolean": False,
        "category": (schema.get("categories") or [""])[0],
        "list": [],
        "coordinates": [0.0, 0.0],
    }
    return {"answer": priors[schema["format"]]}


def main() -> None:
    """Read prompt.md of the workspace given as argument and write work/answer.json."""
    workspace = Path(sys.argv[1])
    schema = read_block((workspace / "prompt.md").read_text(), "Answer format")
    (workspace / "work" / "answer.json").write_text(json.dumps(guess(schema)))


if __name__ == "__main__":
    main()
