"""The domain-knowledge prior guesser (MoSciBench's NoDataGuess with a reader's knowledge).

Answers a hypothesis with what the literature or a textbook would suggest without looking at the
data - the task's declared `prior` (e.g. the standard 6.5 degC/km lapse rate), passed in by the
harness as JSON (argv[2]); never opens `data/`. With no prior (a metric task, or none declared) it
answers like `nodata`. Standalone: it runs in the sandbox, stdlib only.
"""

import json
import sys
from pathlib import Path

from nodata import guess
from prompt_blocks import read_block


def main() -> None:
    """Write work/answer.json for the workspace argv[1] from the prior argv[2] (JSON, or null)."""
    workspace, prior = Path(sys.argv[1]), json.loads(sys.argv[2])
    schema = read_block((workspace / "prompt.md").read_text(), "Answer format")
    answer = guess(schema) if prior is None or schema["kind"] != "hypothesis" else {"answer": prior}
    (workspace / "work" / "answer.json").write_text(json.dumps(answer))


if __name__ == "__main__":
    main()
