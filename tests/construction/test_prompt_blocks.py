"""Every reader of a rendered prompt's JSON blocks reads what the renderer wrote.

The harness reads the blocks with `stages.catalog_scopes.read_prompt_block`; programs in the sandbox
cannot import the harness and carry their own reader: the built-in agents
(`scripts/prompt_blocks.py`), the reference models (`reference_models.inputs`) and the annotators
(`annotator_common.read_block`). They share one pattern and must return the same JSON for every
block of every catalog task's prompt.
"""

from __future__ import annotations

import importlib.util
import json
import re
from datetime import date
from pathlib import Path

import pytest
from scibench_testing.annotators import CATALOG

from stages import catalog_scopes
from stages.catalog import load_catalog
from stages.catalog_scopes import read_prompt_block
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.evaluation.agents.builtin import SCRIPTS
from stages.evaluation.agents.scripts.reference_models import inputs as reference_inputs

DOMAINS = sorted(p.name for p in CATALOG.iterdir() if (p / "scopes.yaml").exists())
NAMES = ("Scope", "Answer format", "Artifact")
SCOPE = ResolvedScope("s", "geographic", "a scope", "", "id", ("a", "b", "c", "d"),
                      date(2001, 1, 1), date(2004, 12, 31))


def standalone(path: Path):
    spec = importlib.util.spec_from_file_location(f"standalone_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def readers():
    return standalone(SCRIPTS / "prompt_blocks.py"), standalone(CATALOG / "annotator_common" / "annotator_common.py")


def test_every_reader_uses_the_one_pattern(readers):
    scripts, annotator = readers
    assert scripts.BLOCK == annotator.BLOCK == catalog_scopes.BLOCK
    for name, compiled in reference_inputs.BLOCKS.items():
        assert compiled.pattern == catalog_scopes.BLOCK.format(name=re.escape(name))
        assert compiled.flags & re.DOTALL


def test_every_reader_returns_each_block_the_renderer_wrote(readers, tmp_path):
    scripts, annotator = readers
    checked = 0
    for task in load_catalog(CATALOG, DOMAINS):
        prompt = render_prompt(task.spec, SCOPE, "q-test")
        (tmp_path / "prompt.md").write_text(prompt)
        for name in NAMES:
            if f"## {name}\n" not in prompt:
                assert scripts.find_block(prompt, name) is None, (task.spec.id, name)
                continue
            block = read_prompt_block(prompt, name)
            assert json.loads(json.dumps(block)) == block and block, (task.spec.id, name)
            assert scripts.read_block(prompt, name) == block, (task.spec.id, name)
            assert annotator.read_block(name, tmp_path / "prompt.md") == block, (task.spec.id, name)
            if name in reference_inputs.BLOCKS:
                assert reference_inputs.read_block(prompt, name) == block, (task.spec.id, name)
            checked += 1
    assert checked >= 2 * len(load_catalog(CATALOG, DOMAINS))  # every prompt has a scope and an answer format


def test_a_missing_block_is_a_named_error_for_every_reader(readers, tmp_path):
    scripts, annotator = readers
    prompt = "# task\n\n## Scope\n\nNo fence here.\n"
    (tmp_path / "prompt.md").write_text(prompt)
    for read in (lambda: read_prompt_block(prompt, "Scope"), lambda: scripts.read_block(prompt, "Scope"),
                 lambda: reference_inputs.read_block(prompt, "Scope")):
        with pytest.raises(ValueError, match="prompt has no '## Scope' block"):
            read()
    with pytest.raises(ValueError, match=f"{tmp_path / 'prompt.md'}: no '## Scope' block"):
        annotator.read_block("Scope", tmp_path / "prompt.md")
