"""The limits have one definition (`SandboxLimits`) and one translation into the sandbox's `Limits`."""

import ast
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from stages.params import ParamsError, load_params
from stages.sandbox import Limits, SandboxLimits

ROOT = Path(__file__).resolve().parents[2]
GIB, MIB = 1 << 30, 1 << 20


def test_the_defaults_in_bytes():
    assert SandboxLimits().to_limits() == Limits(
        wall_seconds=600.0, cpu_seconds=600, memory_bytes=8 << 30, address_space_bytes=8 << 30,
        file_size_bytes=1 << 30, processes=512, cpu_cores=1.0, work_bytes=1 << 30, tmp_bytes=256 << 20,
        shm_bytes=64 << 20, output_bytes=64 << 20)


def test_a_fractional_memory_size_is_whole_bytes():
    limits = SandboxLimits(memory_gb=0.5).to_limits()
    assert (limits.memory_bytes, limits.address_space_bytes) == (512 << 20, 512 << 20)
    assert isinstance(limits.memory_bytes, int)


@pytest.mark.parametrize("section", ["construct", "evaluate"])
def test_the_params_yaml_limits_reach_the_sandbox_field_by_field(section: str):
    stated = yaml.safe_load((ROOT / "params.yaml").read_text())[section]["limits"]
    assert set(stated) == set(SandboxLimits.model_fields) - {"shm_mb"}  # every knob but /dev/shm's size is stated
    reached = asdict(getattr(load_params(ROOT / "params.yaml"), section).limits.to_limits())
    expected = {
        "wall_seconds": stated["wall_seconds"],
        "cpu_seconds": stated["cpu_seconds"],
        "memory_bytes": stated["memory_gb"] * GIB,
        "address_space_bytes": stated["memory_gb"] * GIB,
        "file_size_bytes": stated["file_size_mb"] * MIB,
        "processes": stated["processes"],
        "cpu_cores": stated["cpu_cores"],
        "work_bytes": stated["work_mb"] * MIB,
        "tmp_bytes": stated["tmp_mb"] * MIB,
        "shm_bytes": 64 * MIB,  # not in params.yaml: the default
        "output_bytes": stated["output_mb"] * MIB,
    }
    assert list(reached) == list(expected)
    for field, value in expected.items():
        assert (field, reached[field]) == (field, value)


@pytest.mark.parametrize("section", ["construct", "evaluate"])
def test_an_unknown_limit_in_params_yaml_is_refused_naming_it(section: str, tmp_path: Path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw[section]["limits"]["memory_mb"] = 4096
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=rf"{section}\.limits\.memory_mb\s+Extra inputs are not permitted"):
        load_params(tmp_path / "params.yaml")


def test_an_unknown_limit_is_refused_naming_it():
    with pytest.raises(ValidationError, match=r"wall_secs\s+Extra inputs are not permitted"):
        SandboxLimits.model_validate({"wall_secs": 10})


def test_only_the_translation_builds_the_sandboxs_limits():
    builders = []
    for folder in ("stages", "flows", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Limits":
                    builders.append(str(path.relative_to(ROOT)))
    assert builders == ["stages/sandbox/limits.py"]
