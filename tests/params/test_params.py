from pathlib import Path

import pytest
import yaml

from stages.params import ParamsError, load_params

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_auto_generator_is_offline_or_a_named_model_with_valid_generation_settings(tmp_path: Path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert load_params(ROOT / "params.yaml").generate.auto.generator.kind == "offline"
    model = {"kind": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:8000/v1", "api_key_env": None,
             "generation": {"temperature": 0.7, "seed": 0, "max_tokens": 1024}}
    raw["generate"]["auto"]["generator"] = model
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    generator = load_params(tmp_path / "params.yaml").generate.auto.generator
    assert (generator.model, generator.generation["temperature"]) == ("gpt-4o-mini", 0.7)
    for broken, message in [({"model": None}, "kind openai names no model"),
                            ({"kind": "offline"}, "kind offline with a model"),
                            ({"generation": {"temprature": 0.7}}, "temprature"),
                            ({"kind": "anthropic"}, "Input should be 'offline' or 'openai'")]:
        raw["generate"]["auto"]["generator"] = model | broken
        (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
        with pytest.raises(ParamsError, match=message):
            load_params(tmp_path / "params.yaml")
