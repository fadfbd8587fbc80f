"""The fabricate agent hands in artifacts that look right from the prompt alone, never opening data/."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stages.catalog import load_task
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.scoring.query.artifacts import ArtifactError, read_artifact
from stages.scoring.query.truth import withhold

ROOT = Path(__file__).resolve().parents[3]
FABRICATE = ROOT / "stages" / "evaluation" / "agents" / "scripts" / "fabricate.py"
CAMELS = ROOT / "catalog" / "camels"
BASINS = ("01013500", "01022500", "01030500")
START, END = date(2000, 1, 1), date(2000, 12, 31)
# Runs a script with an audit hook that refuses any open, listing or chdir under <workspace>/data:
# the proof holds for root too, whom `chmod 000` does not stop.
GUARD = textwrap.dedent("""
    import os, runpy, sys
    script, workspace = sys.argv[1], sys.argv[2]
    data = os.path.realpath(os.path.join(workspace, "data"))
    def guard(event, args):
        if event in ("open", "os.listdir", "os.scandir", "os.chdir", "os.stat") and args:
            path = args[0]
            if isinstance(path, (str, bytes, os.PathLike)):
                path = os.path.realpath(os.fsdecode(path))
                if path == data or path.startswith(data + os.sep):
                    raise PermissionError("opened " + path)
    sys.addaudithook(guard)
    sys.argv = [script, workspace]
    sys.path.insert(0, os.path.dirname(script))  # as `python script` puts its folder first
    runpy.run_path(script, run_name="__main__")
""")


def workspace(tmp_path: Path, task_id: str) -> Path:
    """prompt.md rendered for the catalog task, an unreadable data/ holding a file, an empty work/."""
    task = load_task(CAMELS / task_id).spec
    resolved = ResolvedScope("s", "temporal", "three basins", "", "gauge_id", BASINS, START, END)
    root = tmp_path / task_id
    (root / "data").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "prompt.md").write_text(render_prompt(task, resolved))
    (root / "data" / "timeseries.parquet").write_bytes(b"not for fabricate")
    return root


def run_guarded(script: Path, root: Path) -> subprocess.CompletedProcess:
    (root / "data").chmod(0o000)
    try:
        return subprocess.run([sys.executable, "-c", GUARD, str(script), str(root)], capture_output=True,
                              text=True, timeout=60)
    finally:
        (root / "data").chmod(0o755)


def required_rows(task_id: str) -> pd.DataFrame:
    """What the harness owes for this task on a complete series of the scope."""
    dates = pd.date_range(START, END)
    series = pd.DataFrame({"gauge_id": np.repeat(BASINS, len(dates)), "date": np.tile(dates, len(BASINS)),
                           "prcp_mm_d": 2.0, "qobs_mm_d": np.tile(np.arange(1.0, len(dates) + 1), len(BASINS))})
    truth = load_task(CAMELS / task_id).spec.truth
    return withhold(truth, {"timeseries": series}, "gauge_id", START, END, "q-1").required


def test_the_guard_stops_a_script_that_reads_data(tmp_path):
    root = workspace(tmp_path, "camels-streamflow-prediction")
    reader = tmp_path / "reader.py"
    reader.write_text("import pathlib, sys\n"
                      "print(pathlib.Path(sys.argv[1], 'data', 'timeseries.parquet').read_bytes())\n")
    result = run_guarded(reader, root)
    assert result.returncode != 0
    assert "PermissionError: opened" in result.stderr


@pytest.mark.parametrize(
    ("task_id", "artifact", "answer"),
    [
        ("camels-streamflow-prediction", "predictions.parquet", {"nse": 0.72, "kge": 0.68}),
        ("camels-signature-clustering", "clusters.parquet", {"silhouette": 0.45}),
    ],
)
def test_fabricate_hands_in_an_artifact_the_reader_accepts_without_opening_data(tmp_path, task_id, artifact,
                                                                                 answer):
    root = workspace(tmp_path, task_id)
    result = run_guarded(FABRICATE, root)
    assert result.returncode == 0, result.stderr[-2000:]
    spec = load_task(CAMELS / task_id).spec
    required = required_rows(task_id)
    frame = read_artifact((root / "work" / artifact).read_bytes(), spec.artifact, required)
    assert len(frame) == len(required)
    assert json.loads((root / "work" / "answer.json").read_text()) == {"metrics": answer}


def test_fabricated_holdout_rows_cover_the_test_period_with_a_seasonal_flow(tmp_path):
    root = workspace(tmp_path, "camels-streamflow-prediction")
    assert run_guarded(FABRICATE, root).returncode == 0
    frame = pd.read_parquet(root / "work" / "predictions.parquet")
    # 366 days of 2000: floor(0.7 * 366) = 256 training days, the test period 2000-09-13..12-31.
    assert len(frame) == 3 * 110
    assert str(frame["date"].min())[:10] == "2000-09-13" and str(frame["date"].max())[:10] == "2000-12-31"
    assert frame["qsim_mm_d"].between(0.2, 1.8).all()


def test_fabricate_cannot_hand_in_hidden_gap_rows_without_the_data(tmp_path):
    root = workspace(tmp_path, "camels-gap-filling")
    assert run_guarded(FABRICATE, root).returncode == 0
    spec = load_task(CAMELS / "camels-gap-filling").spec
    with pytest.raises(ArtifactError, match="required rows are missing"):
        read_artifact((root / "work" / "filled.parquet").read_bytes(), spec.artifact,
                      required_rows("camels-gap-filling"))
