"""How much a task's golds vary: the best constant answer and the spreads of golds and references."""

from __future__ import annotations

import json

import pytest

from stages.scoring.aggregate.golds import best_constant_share, gold_spread

# --- the best single constant answer --------------------------------------------------------------


@pytest.mark.parametrize(
    ("golds", "tolerances", "share", "constant"),
    [
        ([], [], 0.0, None),
        ([3.0, 3.0, 3.0], [0.0, 0.0, 0.0], 1.0, 3.0),
        # Windows [-0.6, 0.6], [0.4, 1.6], [1.4, 2.6]: at most two overlap; of the points covering
        # two, 0.4 (the left end of the second window) is nearest 0.
        ([0.0, 1.0, 2.0], [0.6, 0.6, 0.6], 2 / 3, 0.4),
        # Windows that only touch: 1.0 is in both (the tolerance is inclusive).
        ([0.0, 2.0], [1.0, 1.0], 1.0, 1.0),
        # Different tolerances: [0.9, 1.1] and [1.0, 1.2] overlap on [1.0, 1.1], [4.9, 5.1] apart.
        ([1.0, 1.1, 5.0], [0.1, 0.1, 0.1], 2 / 3, 1.0),
        # A wide window [0, 20] holds two narrow ones, [4.9, 5.1] and [5.4, 5.6], that do not
        # overlap: two golds at most, first reached at 4.9.
        ([5.0, 5.5, 10.0], [0.1, 0.1, 10.0], 2 / 3, 4.9),
        # Negative golds: [-1.3, -0.7] and [-1.8, -1.2] overlap on [-1.3, -1.2]; -1.2 is nearest 0.
        ([-1.0, -1.5], [0.3, 0.3], 1.0, -1.2),
        ([5.0], [0.0], 1.0, 5.0),
    ],
)
def test_best_constant_share_is_the_most_golds_one_value_matches(golds, tolerances, share, constant):
    found_share, found_constant = best_constant_share(golds, tolerances)
    assert found_share == pytest.approx(share)
    assert found_constant == (None if constant is None else pytest.approx(constant))


# --- gold spread ----------------------------------------------------------------------------------


def write_task(tmp_path, records: dict, references: dict[str, dict]) -> None:
    private = tmp_path / "tasks" / "t" / "private"
    private.mkdir(parents=True)
    (private / "queries.json").write_text(json.dumps(records))
    for query_id, values in references.items():
        (private / query_id).mkdir()
        (private / query_id / "references.json").write_text(json.dumps(values))


def test_gold_spread_of_a_hypothesis_task_reports_the_best_constant(tmp_path):
    records = {"q1": {"gold": {"answer": 0.1}, "tolerance": 0.05},
               "q2": {"gold": {"answer": 0.12}, "tolerance": 0.05},
               "q3": {"gold": {"answer": 0.5}, "tolerance": None}}
    write_task(tmp_path, records, {})
    spread = gold_spread(tmp_path, "t")
    assert spread == {"kind": "hypothesis", "gold": {"n": 3, "min": 0.1, "median": 0.12, "max": 0.5},
                      "tolerance": {"n": 3, "min": 0.0, "median": 0.05, "max": 0.05},
                      "best_constant": pytest.approx(0.07), "best_constant_share": pytest.approx(2 / 3, abs=1e-6)}


def test_gold_spread_of_a_metrics_task_includes_the_defined_reference_values(tmp_path):
    records = {"q1": {"gold": {"metrics": {"nse": 0.5}}}, "q2": {"gold": {"metrics": {"nse": 0.7}}}}
    write_task(tmp_path, records, {"q1": {"climatology": {"nse": 0.2}, "region": {"nse": None}},
                                   "q2": {"climatology": {"nse": 0.4},
                                          "_not_applicable": {"nearest_entity": "ValueError: no coordinates"}}})
    spread = gold_spread(tmp_path, "t")
    assert spread == {"kind": "metrics", "gold": {"nse": {"n": 2, "min": 0.5, "median": 0.6, "max": 0.7}},
                      "references": {"climatology": {"nse": {"n": 2, "min": 0.2, "median": 0.3, "max": 0.4}}}}
