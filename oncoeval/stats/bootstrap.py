"""Percentile bootstrap intervals (seeded), through ``scipy.stats.bootstrap``, and the
``bootstrap`` settings block.

The studies' means and paired differences take their intervals from ``oncoeval.stats.compare``
(``mean_ci``, ``paired_diff_ci``: whole clusters, by the measure's declared kind and range;
docs/comparisons.md). What stays here: statistics of a
whole set (``bootstrap_stat_ci``: an AUROC (``auroc_rows``), a rank correlation), the settings, and the matrix
bootstrap the benchmarks compare against scipy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..core.schema import top_level_defaults

# The schema's `bootstrap` defaults: the settings' own defaults, so they are written once.
_DEFAULTS = top_level_defaults("bootstrap")


@dataclass(frozen=True)
class BootstrapSettings:
    n_resamples: int = _DEFAULTS["n_resamples"]
    ci: float = _DEFAULTS["ci"]
    seed: int = _DEFAULTS["seed"]

    @classmethod
    def from_config(cls, config: dict) -> BootstrapSettings:
        """The config's `bootstrap` block (filled by the workflow; filled here when partial)."""
        block = (config or {}).get("bootstrap") or {}
        block = {**_DEFAULTS, **block}
        return cls(
            n_resamples=int(block["n_resamples"]),
            ci=float(block["ci"]),
            seed=int(block["seed"]),
        )


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def bootstrap_mean_ci(values, settings: BootstrapSettings = BootstrapSettings()):
    """(mean, ci_low, ci_high) of the mean of ``values`` over resampled units.

    NaNs are dropped first (a unit without a value is not a zero). With fewer than two values the
    interval is undefined and returned as NaN; a constant sample gets a zero-width interval.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan"), float("nan")
    if np.all(x == x[0]):
        return mean, mean, mean
    res = stats.bootstrap(
        (x,),
        _mean,
        n_resamples=settings.n_resamples,
        confidence_level=settings.ci,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(settings.seed),
    )
    return mean, float(res.confidence_interval.low), float(res.confidence_interval.high)


def bootstrap_stat_ci(
    statistic, n_units: int, settings: BootstrapSettings, min_units: int = 4, clusters=None
):
    """(ci_low, ci_high): percentile CI of any statistic of resampled units.

    ``statistic(indices)`` gets a (resamples x units) matrix of resampled unit indices and returns
    one value per resample, NaN where the resample leaves it undefined (an AUROC of one class, a
    rank correlation of constant values): those resamples are skipped. NaN with fewer than
    ``min_units`` units, or when fewer than half the resamples give a value.

    ``clusters`` (one id per unit) resamples whole clusters instead (see ``_cluster_draws``).
    """
    if n_units < min_units:
        return float("nan"), float("nan")
    if clusters is not None and len(set(clusters)) < n_units:
        values = _cluster_draws(statistic, clusters, settings)
    else:
        values = _unit_draws(statistic, n_units, settings)
    values = values[~np.isnan(values)]
    if len(values) < settings.n_resamples // 2:
        return float("nan"), float("nan")
    alpha = (1 - settings.ci) / 2
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))


def auroc_rows(y, p, indices) -> np.ndarray:
    """AUROC of every resample (row of ``indices``) at once, a ``bootstrap_stat_ci`` statistic:
    Mann-Whitney U / (n1 n0) from average ranks (ties count half, as roc_auc_score); NaN for a
    resample holding a single class."""
    yb, pb = y[indices], p[indices]
    ranks = stats.rankdata(pb, axis=1)
    n1 = yb.sum(axis=1)
    n0 = indices.shape[1] - n1
    u = (ranks * yb).sum(axis=1) - n1 * (n1 + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n1 > 0) & (n0 > 0), u / (n1 * n0), np.nan)


def _cluster_draws(statistic, clusters, settings: BootstrapSettings) -> np.ndarray:
    """The statistic of each resample of whole clusters: scipy's bootstrap draws cluster
    indices, and every unit of a drawn cluster is taken. Resamples then differ in length, so the
    statistic sees one resample (a 1 x units matrix) at a time."""
    _, cluster_of = np.unique(np.asarray(list(clusters), dtype=str), return_inverse=True)
    members = [np.flatnonzero(cluster_of == g) for g in range(cluster_of.max() + 1)]
    if len(members) < 2:
        return np.array([])

    def of_clusters(drawn) -> float:
        return statistic(np.concatenate([members[int(g)] for g in drawn])[None, :])[0]

    return _draws(of_clusters, len(members), settings, vectorized=False)


def _unit_draws(statistic, n_units: int, settings: BootstrapSettings) -> np.ndarray:
    """The statistic of each resample of units (vectorised: all resamples in one call)."""
    return _draws(lambda indices, axis=-1: statistic(indices), n_units, settings, vectorized=True)


def _draws(statistic, n: int, settings: BootstrapSettings, vectorized: bool) -> np.ndarray:
    """scipy's bootstrap distribution of ``statistic`` over resampled indices 0..n-1."""
    with warnings.catch_warnings():
        # scipy's own interval is NaN when a resample is undefined; the skipping is done by
        # bootstrap_stat_ci.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            (np.arange(n),),
            statistic,
            n_resamples=settings.n_resamples,
            confidence_level=settings.ci,
            method="percentile",
            vectorized=vectorized,
            rng=np.random.default_rng(settings.seed),
        )
    return np.asarray(res.bootstrap_distribution, dtype=float)


def _mean_diff(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def paired_bootstrap_diff(a, b, settings: BootstrapSettings = BootstrapSettings()):
    """(mean(a - b), ci_low, ci_high), resampling units once and differencing within a resample.

    ``a`` and ``b`` are aligned per unit; units where either is NaN are dropped.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size == 0:
        return float("nan"), float("nan"), float("nan")
    diff = float(np.mean(a - b))
    if a.size < 2:
        return diff, float("nan"), float("nan")
    if np.all(a - b == (a - b)[0]):
        return diff, diff, diff
    res = stats.bootstrap(
        (a, b),
        _mean_diff,
        paired=True,
        n_resamples=settings.n_resamples,
        confidence_level=settings.ci,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(settings.seed),
    )
    return diff, float(res.confidence_interval.low), float(res.confidence_interval.high)


def bootstrap_mean_cis(matrix, settings: BootstrapSettings = BootstrapSettings()):
    """Means and percentile CIs for many rows at once (rows: models or metrics; columns: units).

    Every row is resampled with the *same* resampled units, as a paired analysis needs, and the
    work is one matrix product: each resample is a vector of multinomial counts over the units,
    so a resampled mean is ``counts @ values / counts @ present``. NaN cells (a unit without a
    value in that row) are left out of that row's means. Returns three arrays: mean, low, high.
    Agrees with ``scipy.stats.bootstrap(method="percentile")`` up to resampling noise
    (tests/spine/test_stats.py checks this).
    """
    x = np.atleast_2d(np.asarray(matrix, dtype=float))
    present = ~np.isnan(x)
    filled = np.where(present, x, 0.0)
    n_units = x.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=1) / present.sum(axis=1)
    if n_units < 2:
        nan = np.full(x.shape[0], np.nan)
        return mean, nan, nan
    rng = np.random.default_rng(settings.seed)
    counts = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=settings.n_resamples)
    counts = counts.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled = (counts @ filled.T) / (counts @ present.T)
    alpha = (1 - settings.ci) / 2
    low, high = np.nanpercentile(resampled, [100 * alpha, 100 * (1 - alpha)], axis=0)
    too_few = present.sum(axis=1) < 2
    low[too_few], high[too_few] = np.nan, np.nan
    return mean, low, high
