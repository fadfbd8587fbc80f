from datetime import date

import pytest

from stages.catalog import TaskSpec
from stages.catalog_scopes import read_prompt_block
from stages.construction.prompts import PromptError, render_prompt
from stages.construction.scopes import ResolvedScope

SCOPE = ResolvedScope("huc01", "geographic", "Basins in New England", "Seaber 1987", "gauge_id",
                      ("01000001", "01000002"), date(2000, 1, 1), date(2004, 12, 31))


def spec(prompt: str) -> TaskSpec:
    return TaskSpec.model_validate({
        "id": "t", "domain": "camels", "category": "prediction_modeling", "difficulty": "easy",
        "modalities": ["timeseries"], "source": {"citation": "A real paper", "doi": "10.1/x"},
        "prompt": prompt, "data": {"repository": "camels", "tables": {"entities": ["gauge_id"]}},
        "scopes": ["huc01"],
        "answer": {"metrics": [{"name": "nse", "description": "NSE", "target": "> 0.3"}]},
    })


def test_prompt_fills_placeholders_and_carries_both_blocks():
    prompt = render_prompt(spec("Model $n_entities basins ($scope_description), $start-$end."), SCOPE)
    assert "Model 2 basins (Basins in New England), 2000-01-01-2004-12-31." in prompt
    assert read_prompt_block(prompt, "Scope")["entities"] == ["01000001", "01000002"]
    assert read_prompt_block(prompt, "Answer format")["metrics"][0]["name"] == "nse"


def test_prompt_never_shows_targets_or_citations():
    prompt = render_prompt(spec("Model the basins."), SCOPE)
    for secret in ("> 0.3", "A real paper", "10.1/x", "Seaber 1987"):
        assert secret not in prompt


def test_unknown_placeholder_is_an_error():
    with pytest.raises(PromptError, match="task t: prompt placeholder problem"):
        render_prompt(spec("Use $unknown."), SCOPE)
