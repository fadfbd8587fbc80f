"""Synthetic control series: layout, determinism and the known structure of every family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.files import folder_bytes

from stages.synthesize import control
from stages.synthesize.control import Params

TINY = Params(n_series=24, first_year=2000, last_year=2002)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    control.write(root, TINY)
    return root


def frames(root: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    series = pd.read_csv(root / "series.csv", dtype={"component": "Int64"})
    daily = pd.concat([pd.read_csv(root / f"{f}.csv") for f in control.FAMILIES], ignore_index=True)
    return series, daily, json.loads((root / "_truth.json").read_text())


def test_files_are_the_native_layout(tiny):
    assert list(folder_bytes(tiny)) == ["_truth.json", "ar.csv", "linear.csv", "mixture.csv", "noise.csv",
                                        "series.csv"]
    lines = (tiny / "ar.csv").read_text().split("\n")
    assert lines[0] == "series_id,date,y,x1,x2,x3,x4,x5" and lines[-1] == ""
    assert lines[1].split(",")[1] == "2000-01-01"
    assert all(len(value.split(".")[1]) == 4 for value in lines[1].split(",")[2:])
    assert (tiny / "series.csv").read_text().startswith("series_id,family,region,a1,a2,a3,component,driver\n")


def test_same_params_give_identical_bytes_and_another_seed_does_not(tmp_path, tiny):
    control.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    control.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    assert folder_bytes(tmp_path / "other")["noise.csv"] != folder_bytes(tiny)["noise.csv"]


def test_family_counts_follow_the_shares_with_at_least_two_each():
    assert control.family_counts(60) == {"mixture": 18, "noise": 12, "ar": 15, "linear": 15}
    assert control.family_counts(24) == {"mixture": 7, "noise": 5, "ar": 6, "linear": 6}
    assert control.family_counts(8) == {"mixture": 2, "noise": 2, "ar": 2, "linear": 2}


def test_series_ids_are_shuffled_across_families(tiny):
    series, daily, _ = frames(tiny)
    assert series["series_id"].tolist() == [f"S{i:04d}" for i in range(1, 25)]
    assert series["family"].iloc[:6].nunique() > 1
    assert len(daily) == 24 * 1096 and not daily[["series_id", "date"]].duplicated().any()


def test_hidden_labels_belong_to_their_families(tiny):
    series, _, truth = frames(tiny)
    mixture = series["family"] == "mixture"
    assert series.loc[mixture, "component"].tolist() == [truth["series"][s]["component"]
                                                         for s in series.loc[mixture, "series_id"]]
    assert series.loc[~mixture, "component"].isna().all()
    assert set(series.loc[series["family"] == "linear", "driver"]) == {"x1", "x2", "x3"}
    assert series.loc[series["family"] != "linear", "driver"].isna().all()


def test_ar_process_has_its_coefficients():
    z = control.ar_process(np.random.default_rng(0), (1.0, -0.5), 1.0, 40_000)
    lagged = np.column_stack([z[1:-1], z[:-2]])
    coefficients = np.linalg.lstsq(lagged, z[2:], rcond=None)[0]
    assert coefficients == pytest.approx([1.0, -0.5], abs=0.02)


def test_linear_series_recover_their_known_coefficients_with_the_drivers_delay(tiny):
    series, daily, truth = frames(tiny)
    for series_id in series.loc[series["family"] == "linear", "series_id"]:
        rows = daily[daily["series_id"] == series_id].reset_index(drop=True)
        known = truth["series"][series_id]
        driver = known["driver"]
        assert known["driver_lag_days"] == 1
        same_day = [f"x{i}" for i in range(1, 6)]
        x = np.column_stack([np.ones(len(rows) - 1), rows[same_day].iloc[1:], rows[driver].iloc[:-1]])
        fitted = np.linalg.lstsq(x, rows["y"].iloc[1:], rcond=None)[0]
        expected = [0.0 if name == driver else value for name, value in known["coefficients"].items()]
        assert fitted[0] == pytest.approx(known["intercept"], abs=0.15)
        assert fitted[1:6] == pytest.approx(expected, abs=0.12)  # the driver does nothing the same day
        assert fitted[6] == pytest.approx(2.0, abs=0.12)  # but 2.0 the next day


def test_mixture_components_separate_in_attributes_and_levels(tiny):
    series, daily, _ = frames(tiny)
    mixture = series[series["family"] == "mixture"].set_index("series_id")
    rows = daily[daily["series_id"].isin(mixture.index)]
    spread = rows.groupby("series_id")["y"].std().groupby(mixture["component"]).mean()
    assert spread.tolist() == pytest.approx([1.7, 2.7, 1.9], abs=0.4)  # sd and seasonal amplitude combined
    centres = mixture.groupby("component")[["a1", "a2", "a3"]].mean().to_numpy()
    assert centres == pytest.approx(np.array([c["centre"] for c in control.COMPONENTS[:3]]), abs=1.0)


def test_noise_series_are_white(tiny):
    series, daily, _ = frames(tiny)
    for series_id in series.loc[series["family"] == "noise", "series_id"]:
        y = daily.loc[daily["series_id"] == series_id, "y"].to_numpy()
        assert abs(np.corrcoef(y[1:], y[:-1])[0, 1]) < 0.1
