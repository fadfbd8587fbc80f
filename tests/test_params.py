from pathlib import Path

import pytest
import yaml

from stages.params import ParamsError, load_params

ROOT = Path(__file__).resolve().parents[1]


def test_the_project_params_validate():
    params = load_params(ROOT / "params.yaml")
    assert params.profile in {"tiny", "default", "full"}
    assert set(params.evaluate.agents) <= set(params.agents)


def test_an_unknown_key_fails_naming_it(tmp_path: Path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["construct"]["concurency"] = 2
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match="concurency"):
        load_params(tmp_path / "params.yaml")


def test_evaluating_an_unconfigured_agent_fails(tmp_path: Path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["evaluate"]["agents"].append("ghost")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=r"unconfigured agents \['ghost'\]"):
        load_params(tmp_path / "params.yaml")


def test_a_domain_names_each_source_once_and_at_least_one(tmp_path: Path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["align"]["camels"]["sources"] = ["camels_us", "imagery", "camels_us"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=r"align\.camels\.sources[\s\S]*lists a source twice"):
        load_params(tmp_path / "params.yaml")
    raw["align"]["camels"]["sources"] = []
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=r"align\.camels\.sources[\s\S]*lists no source"):
        load_params(tmp_path / "params.yaml")
    raw["align"]["camels"]["sources"] = ["camels_us", "landsat"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=r"align\.camels\.sources names sources without an ingest section"):
        load_params(tmp_path / "params.yaml")
