"""Fixtures of the report tests: the hand-made inputs, the report stage run once on them, the scripted model's key."""

from __future__ import annotations

from pathlib import Path

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV
from scibench_testing.report import run_main, write_inputs, write_project


@pytest.fixture
def inputs_dirs(tmp_path: Path) -> tuple[Path, Path]:
    return write_inputs(tmp_path)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The report stage run once on the hand-made project (shared: building takes seconds)."""
    project = write_project(tmp_path_factory.mktemp("report") / "project")
    printed = run_main(project)
    return {"project": project, "printed": printed, "reports": project / "processed/reports"}


@pytest.fixture
def llm_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API key the scripted model's agent reads (tests that run a react query use it)."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
