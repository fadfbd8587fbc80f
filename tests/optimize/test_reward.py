"""The training reward (stages/optimize/reward.py) of a hand-in in a workspace, by hand.

A graded task (NSE median, target > 0.5; pooled RMSE, lower is better) on two basins: the artifact's
per-basin NSE is 0.8 and 0.95 (median 0.875) and its RMSE 0.5, whatever answer.json reports.
Per metric s = 0.10 sanity + 0.40 target + 0.50 value/reference (clipped; reference/value for
lower-is-better), with the one-turn baseline's values as references; without them 0.40 / 0.60.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scibench_testing.optimize import PREDICTIONS, graded_pools
from scibench_testing.project import ROOT

from stages.optimize.reward import HeldOut, workspace_reward


@pytest.fixture
def benchmark(tmp_path: Path) -> Path:
    return graded_pools(tmp_path / "benchmark")


def hand_in(tmp_path: Path, reported: dict, artifact: bytes | None = PREDICTIONS) -> Path:
    work = tmp_path / "workspace" / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "answer.json").write_text(json.dumps({"metrics": reported}))
    if artifact is not None:
        (work / "predictions.parquet").write_bytes(artifact)
    return work.parent


def test_the_reward_is_computed_on_the_recomputed_metrics_against_the_baseline(benchmark, tmp_path):
    workspace = hand_in(tmp_path, {"nse": 0.99, "rmse": 0.01})  # reported far better than recomputed
    baseline = {"q-train": {"nse": 0.7, "rmse": 1.0}}
    # nse 0.875 vs 0.7: 0.1 + 0.4 + 0.5 * 1 (clipped); rmse 0.5 vs 1.0: 0.1 + 0.4 + 0.5 * 1 (1.0 / 0.5 clipped)
    assert workspace_reward("q-train", workspace, benchmark, baseline) == pytest.approx(1.0)
    better = {"q-train": {"nse": 1.75, "rmse": 0.25}}
    # nse 0.875 / 1.75 = 0.5; rmse 0.25 / 0.5 = 0.5: each 0.1 + 0.4 + 0.25
    assert workspace_reward("q-train", workspace, benchmark, better) == pytest.approx(0.75)


def test_without_a_baseline_the_weights_are_sanity_and_target_alone(benchmark, tmp_path):
    workspace = hand_in(tmp_path, {})
    assert workspace_reward("q-val", workspace, benchmark) == pytest.approx(1.0)  # 0.4 + 0.6, both metrics


def test_reported_numbers_without_an_artifact_earn_nothing(benchmark, tmp_path):
    workspace = hand_in(tmp_path, {"nse": 0.99, "rmse": 0.01}, artifact=None)
    assert workspace_reward("q-train", workspace, benchmark, {"q-train": {"nse": 0.7, "rmse": 1.0}}) == 0.0


def test_the_test_split_is_held_out(benchmark, tmp_path):
    with pytest.raises(HeldOut, match="q-test is on the test split"):
        workspace_reward("q-test", hand_in(tmp_path, {}), benchmark)


def test_the_command_prints_the_reward(benchmark, tmp_path):
    (tmp_path / "baseline.json").write_text(json.dumps({"q-train": {"nse": 1.75, "rmse": 0.25}}))
    done = subprocess.run([sys.executable, "-m", "stages.optimize.reward", "q-train", str(hand_in(tmp_path, {})),
                           "--baseline", str(tmp_path / "baseline.json"), "--benchmark", str(benchmark)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "0.750000\n"), done.stderr[-2000:]
