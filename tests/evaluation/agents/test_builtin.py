import json
import subprocess
import sys
from pathlib import Path

import pytest

from stages.catalog import AnswerSpec
from stages.construction.prompts import render_answer_block
from stages.evaluation.agents.builtin import SCRIPTS
from stages.scoring.query.outcomes import Execution, Outcome
from stages.scoring.query.scorer import score_query

METRICS = AnswerSpec.model_validate({"metrics": [
    {"name": "nse", "description": "median NSE", "target": "> 0.3", "valid_range": [None, 1],
     "no_skill": 0.0},
    {"name": "kge", "description": "median KGE", "target": "> 0.0", "valid_range": [None, 1],
     "no_skill": -0.41},
]})
NUMBER = AnswerSpec.model_validate({"hypothesis": {
    "format": "number", "description": "Spearman rho", "abs_tol": 0.05, "rel_tol": 0.0,
    "valid_range": [-1, 1]}})


def run_script(name: str, answer: AnswerSpec, tmp_path: Path) -> str:
    (tmp_path / "work").mkdir()
    (tmp_path / "prompt.md").write_text("# t\n\nObjective.\n\n" + render_answer_block(answer))
    subprocess.run([sys.executable, str(SCRIPTS / name), str(tmp_path)], check=True)
    return (tmp_path / "work" / "answer.json").read_text()


def test_nodata_reports_no_skill_values(tmp_path: Path):
    text = run_script("nodata.py", METRICS, tmp_path)
    assert json.loads(text) == {"metrics": {"nse": 0.0, "kge": -0.41}}
    score = score_query(METRICS, Execution(0, False, None, text), {"metrics": {"nse": 0.8, "kge": 0.7}})
    assert score.outcome == Outcome.UNREALISTIC


def test_nodata_guesses_the_middle_of_a_hypothesis_range(tmp_path: Path):
    assert json.loads(run_script("nodata.py", NUMBER, tmp_path)) == {"answer": 0.0}


@pytest.mark.parametrize("answer", [METRICS, NUMBER])
def test_defensive_answers_are_filtered_as_unrealistic(answer, tmp_path: Path):
    text = run_script("defensive.py", answer, tmp_path)
    gold = {"metrics": {"nse": 0.8, "kge": 0.7}} if answer is METRICS else {"answer": -0.6}
    score = score_query(answer, Execution(0, False, None, text), gold)
    assert score.outcome == Outcome.UNREALISTIC
    assert score.pass_rate == 0.0
