"""The JSON blocks of a rendered prompt (`## Scope`, `## Answer format`, `## Artifact`), read back.

Standalone (stdlib only) for the built-in programs that run at `/agent` in the sandbox: the floors
and the heuristic import it by name. The harness reads the same blocks with
`stages.catalog_scopes.read_prompt_block`, the annotators with `annotator_common.read_block`;
`tests/construction/test_prompt_blocks.py` holds every reader to the blocks the renderer wrote.
"""

from __future__ import annotations

import json
import re

BLOCK = r"## {name}\n.*?```json\n(?P<json>.*?)\n```"  # a heading, then the first ```json fence


def find_block(prompt: str, name: str) -> dict | None:
    """The JSON of the prompt's `## <name>` block, or None when the prompt has none."""
    match = re.search(BLOCK.format(name=re.escape(name)), prompt, re.DOTALL)
    return json.loads(match.group("json")) if match else None


def read_block(prompt: str, name: str) -> dict:
    """The JSON of the prompt's `## <name>` block; a `ValueError` when the prompt has none."""
    block = find_block(prompt, name)
    if block is None:
        raise ValueError(f"prompt has no '## {name}' block with a ```json fence")
    return block
