"""Shared bootstrap helpers: hand-checked edge cases, agreement with scipy, and coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oncoeval.stats import (
    BootstrapSettings,
    bootstrap_mean_ci,
    bootstrap_mean_cis,
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
