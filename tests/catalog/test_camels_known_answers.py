"""Known answers: every camels annotator script on a hand-built workspace whose right answer follows
from its construction.

An OLS slope worked out by hand, two groups of basins, streamflow that is an exact function of a
staged input, gaps in an exact recession; the expected value is derived in the test by plain numpy,
never by the script's own functions. (One test in test_camels_tasks.py does import the clustering
script's signatures: to check them against the harness's, two implementations of one definition.)
"""

from __future__ import annotations

import io
import itertools
import json
import math
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scibench_testing.annotators import KEY, artifact_block, grade, read_series, run_reproduce
from sklearn.metrics import silhouette_score

from stages.catalog import CatalogTask
from stages.construction.prompts import render_prompt
from stages.construction.scopes import ResolvedScope
from stages.sandbox.workspace import make_workspace
from stages.scoring.query.artifacts import read_artifact
from stages.scoring.query.signatures import signature_space


def known_scope(gauges: list[str], start: date, end: date) -> ResolvedScope:
    return ResolvedScope("known", "sample_size", "hand-built basins", "", KEY, tuple(sorted(gauges)),
                         start, end)


def forcing(dates: pd.DatetimeIndex, prcp: np.ndarray) -> dict[str, np.ndarray]:
    """Plausible warm-season forcing around `prcp`: always above freezing (no snow), seasonal."""
    season = np.sin(2 * np.pi * dates.dayofyear.to_numpy() / 365.25)
    tmax = 22.0 + 6.0 * season
    return {"prcp_mm_d": prcp, "tmax_c": tmax, "tmin_c": tmax - 10.0, "srad_w_m2": 200.0 + 80.0 * season,
            "vp_pa": 1200.0 + 300.0 * season, "dayl_s": 43200.0 + 9000.0 * season,
            "swe_mm": np.zeros(len(dates))}


def basin(gauge: str, dates: pd.DatetimeIndex, prcp: np.ndarray, qobs: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({KEY: gauge, "date": dates.date, **forcing(dates, prcp), "qobs_mm_d": qobs})


def entities(gauges: list[str], **columns) -> pd.DataFrame:
    """One row per basin with every entity column any camels task stages (overridable)."""
    n = len(gauges)
    frame = pd.DataFrame({
        KEY: gauges, "huc_02": ["01"] * n, "gauge_name": [f"Basin {g}" for g in gauges],
        "gauge_lat_deg": np.linspace(40.0, 45.0, n), "gauge_lon_deg": np.linspace(-75.0, -70.0, n),
        "elev_mean_m": 300.0, "slope_mean_m_km": 20.0, "area_gages2_km2": 250.0, "p_mean_mm_d": 3.0,
        "pet_mean_mm_d": 2.5, "aridity": 0.8, "frac_snow": 0.0, "p_seasonality": 0.1,
        "high_prec_freq_d_yr": 20.0, "low_prec_freq_d_yr": 200.0,
    })
    for name, values in columns.items():
        frame[name] = values
    return frame


def hand_workspace(tmp_path: Path, task: CatalogTask, scope: ResolvedScope, series: pd.DataFrame,
                   basins: pd.DataFrame) -> Path:
    """A workspace with the task's staged columns of hand-built tables and the rendered prompt."""
    public = tmp_path / "public"
    public.mkdir(parents=True)
    tables = {"timeseries": series, "entities": basins}
    for name, columns in task.spec.data.tables.items():
        tables[name][columns].to_parquet(public / f"{name}.parquet", index=False)
    return make_workspace(render_prompt(task.spec, scope), public, tmp_path)


def days(start: date, end: date) -> pd.DatetimeIndex:
    return pd.date_range(start, end, freq="D")


def test_aridity_slope_is_the_hand_computed_ols_slope(tasks, tmp_path):
    # Five basins whose runoff ratio on observed days is exactly r; aridity x. By hand:
    # mean x = 6.0 / 5 = 1.2, x - mean = (-0.8, -0.4, -0.2, 0.4, 1.0), Sxx = 2.0;
    # mean r = 1.82 / 5 = 0.364, r - mean = (0.256, 0.086, 0.046, -0.144, -0.244);
    # Sxy = -0.2048 - 0.0344 - 0.0092 - 0.0576 - 0.244 = -0.55; slope = Sxy / Sxx = -0.275.
    x = np.array([0.4, 0.8, 1.0, 1.6, 2.2])
    r = np.array([0.62, 0.45, 0.41, 0.22, 0.12])
    slope = np.sum((x - x.mean()) * (r - r.mean())) / np.sum((x - x.mean()) ** 2)
    assert slope == pytest.approx(-0.275, abs=1e-12)
    gauges = [f"9000000{i}" for i in range(1, 6)]
    # Data run a month beyond the scope on both sides; a sixth basin is outside it. Out of scope,
    # and on the null days, precipitation is huge: using those days changes every ratio.
    dates = days(date(2000, 12, 1), date(2002, 1, 31))
    in_scope = (dates >= pd.Timestamp(2001, 1, 1)) & (dates <= pd.Timestamp(2001, 12, 31))
    prcp_base = 1.0 + (np.arange(len(dates)) % 7)
    frames = []
    for i, gauge in enumerate([*gauges, "90000009"]):
        gap = (np.arange(len(dates)) >= 100 + 20 * i) & (np.arange(len(dates)) < 130 + 20 * i)  # in scope
        prcp = np.where(gap | ~in_scope, 60.0, prcp_base)
        ratio = r[i] if i < 5 else 5.0
        qobs = np.where(gap, np.nan, np.where(in_scope, ratio * prcp, 40.0))
        frames.append(basin(gauge, dates, prcp, qobs))
    series = pd.concat(frames, ignore_index=True)
    basins = entities([*gauges, "90000009"], aridity=[*x, 0.1])
    task = tasks["camels-aridity-runoff"]
    scope = known_scope(gauges, date(2001, 1, 1), date(2001, 12, 31))

    first = run_reproduce(task, hand_workspace(tmp_path / "a", task, scope, series, basins))
    second = run_reproduce(task, hand_workspace(tmp_path / "b", task, scope, series, basins))

    assert first == second
    assert first.document == {"answer": -0.275}
    # Every bootstrap replicate is the OLS slope of some resample (a multiset of 5 of the 5 basins
    # with at least two distinct aridities): 126 multisets, 121 with a slope, worked out here.
    possible = []
    for picks in itertools.combinations_with_replacement(range(5), 5):
        xs, rs = x[list(picks)], r[list(picks)]
        if len(set(picks)) > 1:
            possible.append(np.sum((xs - xs.mean()) * (rs - rs.mean())) / np.sum((xs - xs.mean()) ** 2))
    assert len(possible) == 121
    replicates = np.array(json.loads(first.bootstrap)["values"])
    # A resample of one basin repeated has probability 5 / 5**5 = 1/625: ~1 of 500 is skipped.
    assert 490 <= len(replicates) <= 500 and np.isfinite(replicates).all()
    distance = np.abs(replicates[:, None] - np.array(possible)[None, :]).min(axis=1)
    assert distance.max() < 1e-9
    assert np.std(replicates) > 0.01  # the resamples differ: a spread to set the tolerance from


def test_clustering_finds_the_two_built_groups_and_reports_the_harness_silhouette(tasks, tmp_path):
    # Three wet flashy basins (streamflow follows each day's rain over a small base flow) and three
    # dry baseflow-fed ones (a slow seasonal flow), each basin scaled and shaped a little
    # differently: in the standardised signature space the groups lie far apart and their members
    # close together, so the partition is known.
    dates = days(date(2001, 1, 1), date(2002, 12, 31))
    rng = np.random.default_rng(11)
    prcp = np.where(rng.random(len(dates)) < 0.35, rng.exponential(9.0, len(dates)), 0.0)
    season = np.sin(2 * np.pi * dates.dayofyear.to_numpy() / 365.25)
    wet, dry = ["80000001", "80000002", "80000003"], ["80000004", "80000005", "80000006"]
    shapes = [(0.9, 0.03), (1.0, 0.05), (1.1, 0.08)]
    frames = []
    for (scale, base), gauge in zip(shapes, wet, strict=True):
        frames.append(basin(gauge, dates, prcp, scale * (base + 0.8 * prcp)))
    for (scale, amplitude), gauge in zip(shapes, dry, strict=True):
        qobs = scale * (0.3 + amplitude * season)
        qobs[200:215] = np.nan  # a gap: the baseflow filter runs on the interpolated series
        frames.append(basin(gauge, dates, prcp, qobs))
    series = pd.concat(frames, ignore_index=True)
    task = tasks["camels-signature-clustering"]
    scope = known_scope(wet + dry, dates[0].date(), dates[-1].date())
    workspace = hand_workspace(tmp_path, task, scope, series, entities(wet + dry))

    run = run_reproduce(task, workspace)

    labels = pd.read_parquet(io.BytesIO(run.artifact)).astype({KEY: str}).set_index(KEY)["cluster"]
    groups = {frozenset(labels.index[labels == c]) for c in labels.unique()}
    assert groups == {frozenset(wet), frozenset(dry)}
    space = signature_space(read_series(workspace / "data"), KEY, "qobs_mm_d", "prcp_mm_d")
    known = [0 if gauge in wet else 1 for gauge in space.index]
    expected = silhouette_score(space.to_numpy(), known)
    assert expected > 0.7
    assert run.document == {"metrics": {"silhouette": round(expected, 6)}}
    truth = space.reset_index()
    result = grade(task, run, truth, truth[[KEY]])
    assert result.grades.values["silhouette"] == pytest.approx(expected, abs=1e-12)


def first_test_day(start: date, end: date) -> pd.Timestamp:
    """First test day by the prompt's rule: start + floor(0.7 x calendar days)."""
    return pd.Timestamp(start + timedelta(days=math.floor(0.7 * ((end - start).days + 1))))


def nse(obs: np.ndarray, sim: np.ndarray) -> float:
    return float(1.0 - np.sum((sim - obs) ** 2) / np.sum((obs - obs.mean()) ** 2))


def rainy_days(dates: pd.DatetimeIndex, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random(len(dates)) < 0.4, rng.exponential(8.0, len(dates)), 0.0)


def holdout_workspace(tmp_path: Path, task: CatalogTask, flows: dict[str, np.ndarray],
                      prcp: np.ndarray, dates: pd.DatetimeIndex):
    """A workspace whose test-period streamflow is withheld by hand; returns it, the truth, the rows owed."""
    first_test = first_test_day(dates[0].date(), dates[-1].date())
    test = dates >= first_test
    frames = [basin(g, dates, prcp, np.where(test, np.nan, q)) for g, q in flows.items()]
    scope = known_scope(list(flows), dates[0].date(), dates[-1].date())
    workspace = hand_workspace(tmp_path, task, scope, pd.concat(frames, ignore_index=True),
                               entities(list(flows)))
    assert artifact_block((workspace / "prompt.md").read_text())["rows"]["from"] == first_test.date().isoformat()
    truth = pd.concat([pd.DataFrame({KEY: g, "date": dates[test], "qobs_mm_d": q[test]})
                       for g, q in flows.items()], ignore_index=True)
    return workspace, truth, truth[[KEY, "date"]], test


def test_streamflow_prediction_learns_an_exact_function_and_a_constant_exactly(tasks, tmp_path):
    # Basin A's streamflow is half the same day's precipitation, a staged input the script feeds its
    # gradient-boosted trees as a feature: trees approximate a monotone function of one input up to
    # their binning, so the withheld test period must be simulated almost perfectly (NSE > 0.9;
    # the slack covers the bins and test rain beyond the training maximum). Basin B is constant:
    # every training target is 2.0, so the trees' prediction is exactly 2.0. Basin C is noise drawn
    # independently of every input; the harness's median NSE is that of A and C (B has none).
    dates = days(date(2001, 1, 1), date(2003, 12, 31))
    prcp = rainy_days(dates, 5)
    noise = np.random.default_rng(6).gamma(2.0, 1.0, len(dates))
    flows = {"70000001": 0.5 * prcp, "70000002": np.full(len(dates), 2.0), "70000003": noise}
    task = tasks["camels-streamflow-prediction"]
    workspace, truth, required, test = holdout_workspace(tmp_path, task, flows, prcp, dates)

    run = run_reproduce(task, workspace)

    predictions = read_artifact(run.artifact, task.spec.artifact, required)
    sim = {g: predictions.loc[predictions[KEY] == g, "qsim_mm_d"].to_numpy() for g in flows}
    assert nse(flows["70000001"][test], sim["70000001"]) > 0.9
    np.testing.assert_array_equal(sim["70000002"], 2.0)
    # Its own estimates leave the constant basin out as the harness does (no NaN in answer.json).
    assert all(math.isfinite(value) for value in run.document["metrics"].values())
    result = grade(task, run, truth, required)
    # The constant basin has no NSE (zero variance); the median of the two others is their mean.
    expected = (nse(flows["70000001"][test], sim["70000001"]) + nse(noise[test], sim["70000003"])) / 2
    assert result.grades.values["nse"] == pytest.approx(expected, abs=1e-12)


def test_model_comparison_linear_model_recovers_an_exact_linear_relation(tasks, tmp_path):
    # Basin A: streamflow is an exact linear function of the same day's precipitation (a staged
    # input both models get), so least squares fits it without error and predicts the withheld
    # test period exactly: NSE = 1 up to rounding (1e-6). Basins B and C: noise drawn independently
    # of every input, where no model has skill out of sample (NSE <= ~0). Their in-sample NSE is
    # not ~0 (a forest fits noise), so the script's reported estimates, medians over A, B and C,
    # i.e. a noise basin's value, show whether it estimates out of sample as the prompt asks.
    dates = days(date(2001, 1, 1), date(2003, 12, 31))
    prcp = rainy_days(dates, 8)
    flows = {"60000001": 0.5 * prcp + 1.0, "60000002": np.random.default_rng(9).gamma(2.0, 1.0, len(dates)),
             "60000003": np.random.default_rng(10).gamma(2.0, 1.0, len(dates))}
    task = tasks["camels-model-comparison"]
    workspace, truth, required, test = holdout_workspace(tmp_path, task, flows, prcp, dates)

    run = run_reproduce(task, workspace)

    predictions = read_artifact(run.artifact, task.spec.artifact, required)
    scores = {column: {g: nse(flows[g][test], predictions.loc[predictions[KEY] == g, column].to_numpy())
                       for g in flows} for column in ("qsim_linear_mm_d", "qsim_forest_mm_d")}
    assert scores["qsim_linear_mm_d"]["60000001"] == pytest.approx(1.0, abs=1e-6)
    assert scores["qsim_forest_mm_d"]["60000001"] > 0.9  # trees on a monotone function of one input
    for noise in ("60000002", "60000003"):
        assert scores["qsim_linear_mm_d"][noise] < 0.05 and scores["qsim_forest_mm_d"][noise] < 0.05
    reported = run.document["metrics"]
    assert reported["median_nse_linear"] < 0.05 and reported["median_nse_forest"] < 0.05
    result = grade(task, run, truth, required)
    assert result.grades.values == pytest.approx(
        {"median_nse_linear": float(np.median(list(scores["qsim_linear_mm_d"].values()))),
         "median_nse_forest": float(np.median(list(scores["qsim_forest_mm_d"].values())))}, abs=1e-12)


def test_gap_filling_restores_gaps_inside_an_exact_recession(tasks, tmp_path):
    # Every basin recedes exponentially, q + 0.01 = c * exp(-k t), with gaps of 5 to 30 days inside
    # the record. The script fills in log(q + eps), eps = 0.01 mm/d for a basin whose mean flow is
    # below 1 mm/d (its docstring), where these series are straight lines: the interpolation
    # across an interior gap is exact, and so is every departure from it the trees learn on the
    # script's pseudo-gaps (0, as none of them touches the record's ends, where it holds the edge
    # value). So the fill is the recession up to rounding (1e-9 relative); interpolating q itself
    # would miss by up to 5e-4.
    dates = days(date(2001, 1, 1), date(2002, 12, 31))
    t = np.arange(len(dates), dtype=float)
    gauges = ["50000001", "50000002", "50000003"]
    flows = {g: c * np.exp(-k * t) - 0.01
             for g, c, k in zip(gauges, (0.9, 0.6, 0.5), (0.002, 0.003, 0.0015), strict=True)}
    gaps = {"50000001": [(100, 5), (400, 30)], "50000002": [(250, 17)], "50000003": [(40, 9), (600, 30)]}
    hidden = {g: np.isin(t, [d for first, n in gaps[g] for d in range(first, first + n)]) for g in gauges}
    assert all(q.mean() < 1.0 and q.min() > 0 for q in flows.values())
    frames = [basin(g, dates, np.zeros(len(dates)), np.where(hidden[g], np.nan, q)) for g, q in flows.items()]
    task = tasks["camels-gap-filling"]
    workspace = hand_workspace(tmp_path, task, known_scope(gauges, dates[0].date(), dates[-1].date()),
                               pd.concat(frames, ignore_index=True), entities(gauges))

    run = run_reproduce(task, workspace)

    truth = pd.concat([pd.DataFrame({KEY: g, "date": dates[hidden[g]], "qobs_mm_d": q[hidden[g]]})
                       for g, q in flows.items()], ignore_index=True)
    required = truth[[KEY, "date"]]
    filled = pd.read_parquet(io.BytesIO(run.artifact))
    assert sorted(zip(filled[KEY], pd.to_datetime(filled["date"]), strict=True)) == sorted(
        zip(required[KEY], required["date"], strict=True))  # exactly the null days, once each
    joined = read_artifact(run.artifact, task.spec.artifact, required)
    np.testing.assert_allclose(joined["qfill_mm_d"], truth["qobs_mm_d"], rtol=1e-9)
    linear_in_q = np.concatenate([np.interp(t[hidden[g]], t[~hidden[g]], q[~hidden[g]])
                                  for g, q in flows.items()])
    assert np.max(np.abs(linear_in_q / truth["qobs_mm_d"] - 1)) > 1e-4  # the fixture tells them apart
    assert run.document == {"metrics": {"nse_masked": 1.0, "rmse_mm_d": 0.0}}  # its own pseudo-gaps too
    result = grade(task, run, truth, required)
    assert result.grades.values["nse_masked"] == pytest.approx(1.0, abs=1e-12)
    assert result.grades.values["rmse_mm_d"] == pytest.approx(0.0, abs=1e-9)
