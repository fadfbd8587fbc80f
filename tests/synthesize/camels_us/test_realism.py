"""Realism figures of the synthetic CAMELS-US: the pure helpers, on tiny arrays."""

from __future__ import annotations

import numpy as np
import pytest

from stages.scoring.query.metrics import MetricUndefined
from stages.synthesize.camels_us.realism import doy_climatology, region_r2


def test_region_r2_is_one_minus_within_over_total_sum_of_squares():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    # total 5.0, within 0.5 + 0.5
    assert region_r2(values, np.array(["01", "01", "03", "03"])) == pytest.approx(0.8)
    assert region_r2(values, np.array(["01", "03", "01", "03"])) == pytest.approx(0.2)
    assert region_r2(values, np.array(["01", "03", "10", "14"])) == pytest.approx(1.0)


def test_region_r2_skips_missing_values_and_rejects_a_constant_signature():
    values = np.array([1.0, 2.0, np.nan, 3.0, 4.0])
    assert region_r2(values, np.array(["01", "01", "03", "03", "03"])) == pytest.approx(0.8)
    with pytest.raises(MetricUndefined):
        region_r2(np.ones(4), np.array(["01", "01", "03", "03"]))


def test_doy_climatology_predicts_the_mean_of_the_same_day_of_year_over_observed_days():
    q = np.array([1.0, 5.0, 3.0, np.nan])
    doy = np.array([1, 2, 1, 2])
    np.testing.assert_array_equal(doy_climatology(q, doy), [2.0, 5.0, 2.0, 5.0])
