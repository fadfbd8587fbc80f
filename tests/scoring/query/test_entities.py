import math

import pandas as pd
import pytest

from stages.scoring.query.entities import aggregate, entity_rows, per_entity
from stages.scoring.query.metrics import MetricUndefined, nse, rmse

NAN = float("nan")


def test_per_entity_scores_each_entity_sorted_and_reports_the_undefined():
    frame = pd.DataFrame(
        {
            "basin": ["C", "C", "C", "A", "A", "A", "A", "B", "B"],
            "q_obs": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0],
            "q_sim": [1.0, 3.0, 2.0, 1.0, 2.0, 3.0, 6.0, 4.0, 6.0],
        }
    )
    entities = entity_rows(frame["basin"])
    assert list(entities) == ["A", "B", "C"] and entities["A"].tolist() == [3, 4, 5, 6]
    scores = per_entity(entities, frame["q_obs"], frame["q_sim"], nse)
    # A: Σ(sim - obs)² = 4, Σ(obs - 2.5)² = 5 -> 0.2; C: Σ(sim - obs)² = 2, Σ(obs - 2)² = 2 -> 0
    assert scores.values == {"A": 1 - 4 / 5, "C": 0.0}
    assert scores.undefined == {"B": "obs is constant: NSE divides by its variance"}
    assert aggregate(list(scores.values.values()), "median") == pytest.approx(0.1, abs=1e-15)


def test_per_entity_drops_nan_pairs_within_an_entity_and_refuses_rows_without_a_key():
    frame = pd.DataFrame({"basin": ["A", "A", "A"], "q_obs": [1.0, NAN, 3.0], "q_sim": [2.0, 9.0, 3.0]})
    entities = entity_rows(frame["basin"])
    assert per_entity(entities, frame["q_obs"], frame["q_sim"], rmse).values["A"] == math.sqrt(0.5)  # (1 + 0)/2
    frame.loc[2, "basin"] = None
    with pytest.raises(ValueError, match="1 row"):
        entity_rows(frame["basin"])


def test_aggregate():
    assert aggregate([1.0, 10.0, 2.0], "median") == 2.0
    assert aggregate([1.0, 10.0, 1.0], "mean") == 4.0
    assert aggregate(pd.Series([0.5]), "median") == 0.5
    with pytest.raises(MetricUndefined, match="no scores"):
        aggregate(pd.Series([], dtype=float), "median")
    with pytest.raises(ValueError, match="NaN"):
        aggregate([1.0, NAN, 2.0], "mean")
    with pytest.raises(ValueError, match="unknown aggregate"):
        aggregate([1.0], "max")
