import tomllib
from pathlib import Path

from benchmarks.mutation import MODULE_TESTS, count, mutmut_table, parse_results, prepare, total

RESULTS = """\
    stages.construction.scopes.x__filter__mutmut_1: killed
    stages.construction.scopes.x__filter__mutmut_2: survived
    stages.construction.scopes.x__filter__mutmut_3: no tests
    stages.construction.scopes.x__filter__mutmut_4: timeout
    stages.construction.scopes.x__filter__mutmut_5: skipped
    stages.construction.scopes.x__filter__mutmut_6: segfault
    stages.construction.scopes.x__filter__mutmut_7: killed
"""


def test_results_are_read_per_mutant_including_statuses_with_spaces():
    statuses = parse_results("a warning line\n" + RESULTS)
    assert len(statuses) == 7
    assert statuses["stages.construction.scopes.x__filter__mutmut_3"] == "no tests"
    assert statuses["stages.construction.scopes.x__filter__mutmut_6"] == "segfault"


def test_counts_cover_every_mutant_and_the_share_leaves_out_skipped_ones():
    assert count(parse_results(RESULTS)) == {
        "mutants": 7, "killed": 2, "survived": 1, "timeout": 1, "suspicious": 0, "skipped": 1,
        "no_tests": 1, "other": 1, "killed_share": round(2 / 6, 4),
    }


def test_no_mutants_give_a_zero_share():
    assert count({})["killed_share"] == 0.0


def test_total_adds_modules_and_recomputes_the_share():
    one = {**count({"a": "killed", "b": "survived"}), "seconds": 1.25}
    two = {**count({"c": "killed", "d": "killed", "e": "timeout", "f": "skipped"}), "seconds": 2.0}
    summed = total({"x": one, "y": two})
    assert (summed["mutants"], summed["killed"], summed["skipped"], summed["seconds"]) == (6, 3, 1, 3.2)
    assert summed["killed_share"] == 0.6


def test_a_package_is_mutated_whole_and_a_file_alone():
    package = tomllib.loads(mutmut_table("stages/scoring", ["tests/scoring"]))["tool"]["mutmut"]
    assert package["only_mutate"] == ["stages/scoring/*"]
    assert package["pytest_add_cli_args_test_selection"] == ["tests/scoring"]
    single = tomllib.loads(mutmut_table("stages/evaluation/journal.py",
                                        ["tests/evaluation/test_journal.py", "tests/more"]))
    assert single["tool"]["mutmut"]["only_mutate"] == ["stages/evaluation/journal.py"]
    assert single["tool"]["mutmut"]["pytest_add_cli_args_test_selection"] == [
        "tests/evaluation/test_journal.py", "tests/more"]


def test_scratch_copy_keeps_the_project_config_and_adds_the_mutmut_table(tmp_path):
    root = tmp_path / "root"
    (root / "stages" / "__pycache__").mkdir(parents=True)
    (root / "stages" / "scopes.py").write_text("X = 1\n")
    (root / "stages" / "__pycache__" / "scopes.pyc").write_bytes(b"")
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "runs.py").write_text("Y = 2\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_scopes.py").write_text("")
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-q"\n')
    scratch = prepare("stages/construction/scopes.py", ["tests/construction/test_scopes.py"], root, tmp_path / "work")
    assert scratch == tmp_path / "work" / "stages.construction.scopes"
    assert (scratch / "stages" / "scopes.py").read_text() == "X = 1\n"
    assert not (scratch / "stages" / "__pycache__").exists()
    assert (scratch / "benchmarks" / "runs.py").read_text() == "Y = 2\n"  # the tests' helpers import it
    config = tomllib.loads((scratch / "pyproject.toml").read_text())
    assert config["tool"]["pytest"]["ini_options"]["addopts"] == "-q"
    assert config["tool"]["mutmut"]["only_mutate"] == ["stages/construction/scopes.py"]
    assert config["tool"]["mutmut"]["also_copy"] == ["benchmarks"]


def test_every_module_named_exists():
    root = Path(__file__).parents[2]
    assert all((root / module).exists() for module in MODULE_TESTS)
