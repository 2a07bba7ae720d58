"""Shared bootstrap helpers: hand-checked edge cases, agreement with scipy, and coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oncoeval.stats.bootstrap import (
    BootstrapSettings,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
    bootstrap_stat_ci,
    paired_bootstrap_diff,
)


def test_constant_sample_has_a_zero_width_interval():
    assert bootstrap_mean_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)


def test_missing_values_are_dropped_not_zeroed():
    mean, low, high = bootstrap_mean_ci([1.0, float("nan"), 0.0, 1.0])
    assert mean == pytest.approx(2 / 3)
    assert 0.0 <= low <= mean <= high <= 1.0


def test_a_single_value_has_no_interval():
    mean, low, high = bootstrap_mean_ci([0.8])
    assert mean == 0.8 and math.isnan(low) and math.isnan(high)


def test_paired_difference_of_a_constant_shift_is_exact():
    a = np.array([0.2, 0.4, 0.9, 0.1])
    assert paired_bootstrap_diff(a, a - 0.1) == pytest.approx((0.1, 0.1, 0.1))


def test_paired_resampling_is_tighter_than_the_unpaired_spread():
    rng = np.random.default_rng(3)
    base = rng.normal(0.5, 0.3, 200)
    diff, low, high = paired_bootstrap_diff(base + 0.05, base + rng.normal(0, 0.01, 200))
    assert low < diff < high and high - low < 0.01


def test_matrix_bootstrap_agrees_with_scipy_per_row():
    rng = np.random.default_rng(0)
    matrix = rng.random((3, 300))
    settings = BootstrapSettings(n_resamples=4000, ci=0.95, seed=1)
    mean, low, high = bootstrap_mean_cis(matrix, settings)
    for row in range(3):
        m, lo, hi = bootstrap_mean_ci(matrix[row], settings)
        assert mean[row] == pytest.approx(m)
        assert low[row] == pytest.approx(lo, abs=0.004)
        assert high[row] == pytest.approx(hi, abs=0.004)


def test_matrix_bootstrap_leaves_out_missing_cells_per_row():
    matrix = np.array([[1.0, 0.0, 1.0, np.nan], [0.0, 0.0, 0.0, 0.0]])
    mean, low, high = bootstrap_mean_cis(matrix, BootstrapSettings(n_resamples=500))
    assert mean[0] == pytest.approx(2 / 3) and mean[1] == 0.0
    assert low[1] == high[1] == 0.0


def test_matrix_bootstrap_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    true_mean, trials, n_units = 0.3, 400, 60
    # 400 simulated studies of 60 Bernoulli(0.3) units each, bootstrapped in one call.
    matrix = (rng.random((trials, n_units)) < true_mean).astype(float)
    _, low, high = bootstrap_mean_cis(matrix, BootstrapSettings(n_resamples=2000, seed=5))
    coverage = np.mean((low <= true_mean) & (true_mean <= high))
    # Percentile intervals under-cover slightly at n=60; 400 trials give a standard error of 1.1%.
    assert 0.90 <= coverage <= 0.98, coverage


def test_any_statistic_gets_the_same_percentile_bootstrap_as_the_mean():
    x = np.array([0.1, 0.4, 0.4, 0.9, 1.0, 0.3])
    settings = BootstrapSettings(n_resamples=400, seed=2)
    _, low, high = bootstrap_mean_ci(x, settings)
    assert bootstrap_stat_ci(lambda i: x[i].mean(axis=1), len(x), settings) == pytest.approx(
        (low, high)
    )


def test_undefined_resamples_are_skipped_and_too_few_give_no_interval():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    settings = BootstrapSettings(n_resamples=200, ci=0.9, seed=7)

    def mean_unless_unit_0_twice(indices):  # undefined where a resample drew unit 0 twice
        return np.where((indices == 0).sum(axis=1) >= 2, np.nan, x[indices].mean(axis=1))

    # the same resamples by hand: rows of unit indices from the seeded generator
    drawn = np.random.default_rng(7).integers(0, 5, (200, 5))
    kept = [x[row].mean() for row in drawn if (row == 0).sum() < 2]
    assert 100 <= len(kept) < 200  # P(kept) = 0.8^5 + 5 * 0.2 * 0.8^4 = 0.74
    assert bootstrap_stat_ci(mean_unless_unit_0_twice, 5, settings) == pytest.approx(
        tuple(np.quantile(kept, [0.05, 0.95]))
    )

    # fewer than half the resamples defined (P(unit 0 drawn twice) = 0.26), or too few units
    def only_if_unit_0_twice(indices):
        return np.where((indices == 0).sum(axis=1) >= 2, 1.0, np.nan)

    assert all(map(math.isnan, bootstrap_stat_ci(only_if_unit_0_twice, 5, settings)))
    assert all(map(math.isnan, bootstrap_stat_ci(lambda i: i.mean(axis=1), 3, settings)))
