"""The report's generated-benchmark section: what the generate and generated_validity stages wrote, as tables."""

import json

from stages.report.generated_tables import generated_tables
from stages.report.inputs import load_generated

SDA = {"instances": 1200, "datasets": 50, "splits": {"train": 720, "test": 480},
       "rejected": {"near_duplicate": 10, "over_quota": 30, "no_binding": 5, "answer_leakage": 1}}
FLOORS = {"split": "test", "failures": [], "floors": {"sda": {
    "nodata": {"mcq": {"n": 480, "accuracy": 0.2667, "chance": 0.2523, "bound": 0.3177},
               "oeq": {"n": 480, "accuracy": 0.0146, "chance": 0.0211, "bound": 0.0456}},
    "defensive": {"mcq": {"n": 480, "accuracy": 0.0, "chance": 0.2523, "bound": 0.3177},
                  "oeq": {"n": 480, "accuracy": 0.0, "chance": 0.0211, "bound": 0.0456}}}}}
LOOP = {"generator": {"name": "offline", "usage": None},
        **{key: {"concepts": 30, "kept": {"easy": 6, "moderate": 8, "hard": 16, "none": 0},
                 "solver_success_by_round": {"1": 0.909, "2": 0.7}, "refused_by_floors": {"passed by nodata": 1},
                 "rounds": {}} for key in ("with_cards", "without_cards")}}


def _write(root, sda=True, floors=True, loop=True):
    files = {"generated/sda/summary.json": SDA if sda else None, "metrics/generated_validity.json":
             FLOORS if floors else None, "generated/auto/report.json": LOOP if loop else None}
    for name, value in files.items():
        if value is not None:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(json.dumps(value))


def test_the_generated_tables_show_instances_rejections_floors_and_the_loop(tmp_path):
    _write(tmp_path)
    instances, loop = generated_tables(load_generated(tmp_path / "generated", tmp_path / "metrics"))
    assert instances.rows == (("SDA-Synth", "1,200", "50", "720", "480", "16",
                               "near_duplicate 10, no_binding 5, answer_leakage 1", "30",
                               "0.267 / 0.252 / 0.318", "0.015 / 0.021 / 0.046"),)
    assert instances.caption.endswith("No floor beats chance.")
    assert loop.rows[0] == ("with cards", "30", "6", "8", "16", "0", "1", "1: 0.91, 2: 0.70")
    assert loop.caption.startswith("Generator offline;")


def test_nothing_generated_gives_no_table_and_a_missing_gate_shows_a_dash(tmp_path):
    assert generated_tables(load_generated(tmp_path / "generated", tmp_path / "metrics")) == []
    _write(tmp_path, floors=False, loop=False)
    (instances,) = generated_tables(load_generated(tmp_path / "generated", tmp_path / "metrics"))
    assert instances.rows[0][-2:] == ("—", "—") and instances.caption.endswith("the gate's bound.")
