"""YAML as the project reads it: the safe subset, parsed by libyaml when PyYAML was built with it.

PyYAML's pure-Python parser takes ~0.1 s for a task.yaml; scoring one agent read 264 of them (26 of
its 41 CPU-s). libyaml's `CSafeLoader` builds the same objects (tests/test_yamlfile.py reads every
YAML file of the project both ways) at a fraction of the cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def parse_yaml(text: str) -> Any:
    """The objects of a YAML document (safe tags only); `yaml.YAMLError` names the line on bad input."""
    return yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader


def read_yaml(path: Path) -> Any:
    """The YAML document in the file at `path`."""
    return parse_yaml(path.read_text())
