"""Observation and structural errors of the synthetic hydrology."""

from __future__ import annotations

import numpy as np

from stages.synthesize.camels_us import errors


def rngs(n: int, seed: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, i]) for i in range(n)]


def test_a_basin_draws_the_same_values_whatever_basins_are_drawn_with_it():
    prcp = np.random.default_rng(1).gamma(0.5, 4.0, (400, 3))
    tmean = np.random.default_rng(2).normal(2.0, 6.0, (400, 3))
    together = errors.published_precipitation(rngs(3), prcp, tmean, np.full(3, 0.5))
    alone = errors.published_precipitation(rngs(3)[1:2], prcp[:, 1:2], tmean[:, 1:2], np.full(1, 0.5))
    np.testing.assert_array_equal(together[:, 1:2], alone)


def test_undercatch_is_stronger_for_snow_than_for_rain():
    prcp = np.full((20000, 1), 5.0)
    rain = errors.published_precipitation(rngs(1), prcp, np.full((20000, 1), 10.0), np.zeros(1))
    snow = errors.published_precipitation(rngs(1), prcp, np.full((20000, 1), -10.0), np.zeros(1))
    assert errors.RAIN_CATCH[0] - 0.02 < rain.mean() / 5 < errors.RAIN_CATCH[1] + 0.02
    assert errors.SNOW_CATCH[0] - 0.02 < snow.mean() / 5 < errors.SNOW_CATCH[1] + 0.02
    assert snow.mean() < rain.mean()


def test_published_temperature_keeps_the_maximum_above_the_minimum():
    tmin = np.random.default_rng(3).normal(0.0, 5.0, (3000, 4))
    high, low = errors.published_temperature(rngs(4), tmin + 1.0, tmin)
    assert (high - low >= 0.5 - 1e-12).all()
    assert 0.1 < np.abs(high - tmin - 1.0).mean() < 1.5


def test_drift_factors_vary_slowly_around_one_and_shocks_are_rare():
    drift = errors.draw_drift(rngs(50), 3650)
    log_factor = np.log(drift.k_slow_factor)
    assert abs(np.median(log_factor)) < 0.05
    assert abs(log_factor.std() - errors.K_SLOW_DRIFT[1]) < 0.05
    assert np.corrcoef(log_factor[1:].ravel(), log_factor[:-1].ravel())[0, 1] > 0.99
    shocks_per_year = (drift.soil_shock_mm != 0).sum() / 50 / 10
    assert abs(shocks_per_year - errors.SHOCKS_PER_YEAR) < 1.0


def test_the_swe_product_is_zero_without_snowfall_and_never_negative():
    prcp = np.random.default_rng(4).gamma(0.5, 4.0, (730, 2))
    warm = errors.modelled_swe(rngs(2), prcp, np.full((730, 2), 15.0), np.full(2, 3.0))
    assert (warm == 0).all()
    cold = np.where(np.arange(730)[:, None] % 365 < 90, -8.0, 8.0) * np.ones((1, 2))
    swe = errors.modelled_swe(rngs(2), prcp, cold, np.full(2, 3.0))
    assert (swe >= 0).all() and swe.max() > 50
