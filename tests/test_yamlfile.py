"""The project's YAML reader (stages/yamlfile.py): libyaml's speed, PyYAML's safe objects."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from stages.yamlfile import LOADER, parse_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[1]


def test_libyaml_is_what_reads_the_project():
    assert LOADER is yaml.CSafeLoader  # PyYAML's wheels carry libyaml; without it scoring is ~3x slower


def test_every_yaml_file_of_the_project_reads_as_the_pure_python_safe_loader_reads_it():
    files = subprocess.run(["git", "ls-files", "*.yaml", "*.yml"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    assert len(files) > 140  # the catalog's task.yaml files, scopes, params, dvc.yaml, scenarios
    for name in files:
        text = (ROOT / name).read_text()
        assert parse_yaml(text) == yaml.load(text, Loader=yaml.SafeLoader), name  # noqa: S506


def test_bad_yaml_names_its_line_and_unsafe_tags_are_refused(tmp_path: Path):
    path = tmp_path / "task.yaml"
    path.write_text("id: a\nanswer:\n  kind: [number\n")
    with pytest.raises(yaml.YAMLError, match=r"line 4"):
        read_yaml(path)
    with pytest.raises(yaml.constructor.ConstructorError):
        parse_yaml("!!python/object/apply:os.system ['true']")
