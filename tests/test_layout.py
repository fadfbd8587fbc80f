"""The layout rules of docs/layout.md that a test can hold: tests mirror the packages, modules stay small."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("stages", "flows", "benchmarks")


def test_each_package_of_stages_down_to_the_second_level_has_its_tests_folder():
    packages = {init.parent.relative_to(ROOT / "stages") for init in (ROOT / "stages").rglob("__init__.py")}
    missing = sorted(str(p) for p in packages if 1 <= len(p.parts) <= 2 and not (ROOT / "tests" / p).is_dir())
    assert missing == []


def test_no_module_of_the_product_or_its_tooling_is_over_300_lines():
    long = {str(path.relative_to(ROOT)): n for package in (*PACKAGES, "catalog")
            for path in (ROOT / package).rglob("*.py") if (n := len(path.read_text().splitlines())) > 300}
    assert long == {}
