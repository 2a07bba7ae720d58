"""The bootstrap of whole-set statistics: agreement with scipy's percentile bootstrap, and
resamples that leave the statistic undefined. (Means and paired differences take their
intervals from oncoeval.stats.compare: tests/spine/test_compare.py, test_clusters.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from oncoeval.stats.bootstrap import BootstrapSettings, bootstrap_stat_ci


def test_any_statistic_gets_scipys_percentile_bootstrap():
    x = np.array([0.1, 0.4, 0.4, 0.9, 1.0, 0.3])
    settings = BootstrapSettings(n_resamples=400, seed=2)
    reference = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=400,
        confidence_level=settings.ci,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert bootstrap_stat_ci(lambda i: x[i].mean(axis=1), len(x), settings) == pytest.approx(
        (reference.low, reference.high)
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
