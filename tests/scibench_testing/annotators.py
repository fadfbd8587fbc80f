"""Run a catalog task's annotator script like an agent, outside the sandbox, and grade what it left.

Shared by the catalog tests (tests/catalog/): the staged end-to-end runs and the known-answer
fixtures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stages.catalog import HARNESS_METRICS, CatalogTask
from stages.catalog_scopes import read_prompt_block
from stages.scoring.query.outcomes import Execution
from stages.scoring.query.recompute import Recomputed, recompute

CATALOG = Path(__file__).resolve().parents[2] / "catalog"
ANNOTATOR_LIB = CATALOG / "camels" / "annotator_lib"
ANNOTATOR_COMMON = CATALOG / "annotator_common"  # mounted beside every domain's library
# What the camels annotators import, flat by name, as mounted beside reproduce.py in the sandbox.
ANNOTATOR_PATH = (ANNOTATOR_LIB, ANNOTATOR_COMMON, HARNESS_METRICS.parent)
KEY = "gauge_id"
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Run:
    """What one run of reproduce.py left in `work/`."""

    answer: bytes
    artifact: bytes | None
    bootstrap: bytes | None

    @property
    def document(self) -> dict:
        """answer.json as strict JSON (a NaN or Infinity in it fails the test)."""
        return json.loads(self.answer, parse_constant=reject_constant)


def reject_constant(name: str) -> None:
    raise AssertionError(f"answer.json holds {name}, which is not JSON")


def run_reproduce(task: CatalogTask, workspace: Path) -> Run:
    """Run the annotator script unsandboxed (cwd = workspace, one thread); return what it wrote."""
    result = subprocess.run(
        [sys.executable, str(task.reproduce)],
        cwd=workspace,
        env={**os.environ, **THREADS, "PYTHONPATH": os.pathsep.join(map(str, ANNOTATOR_PATH))},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    work = workspace / "work"
    artifact = work / task.spec.artifact.file if task.spec.artifact is not None else None
    bootstrap = work / "bootstrap.json"
    return Run(
        (work / "answer.json").read_bytes(),
        artifact.read_bytes() if artifact is not None else None,
        bootstrap.read_bytes() if bootstrap.exists() else None,
    )


def grade(task: CatalogTask, run: Run, truth: pd.DataFrame, required: pd.DataFrame) -> Recomputed:
    """The harness's recomputation of the run's metrics against the truth."""
    execution = Execution(0, False, None, run.answer.decode())
    return recompute(task.spec, execution, run.artifact, None, truth, required, KEY)


def artifact_block(prompt: str) -> dict:
    return read_prompt_block(prompt, "Artifact")


def read_series(folder: Path) -> pd.DataFrame:
    """`folder/timeseries.parquet` as an agent reads it, sorted, keys as text, dates as timestamps."""
    frame = pd.read_parquet(folder / "timeseries.parquet")
    frame[KEY] = frame[KEY].astype(str)
    frame["date"] = pd.to_datetime(frame["date"])
    return frame.sort_values([KEY, "date"]).reset_index(drop=True)
