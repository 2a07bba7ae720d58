"""Percentile bootstrap intervals (seeded), through ``scipy.stats.bootstrap``, and the
``bootstrap`` settings block.

The studies' means and paired differences take their intervals from ``oncoeval.stats.compare``
(``mean_ci``, ``paired_diff_ci``: whole clusters, by the measure's declared kind and range;
docs/comparisons.md). What stays here: statistics of a whole set (``bootstrap_stat_ci``: an
AUROC (``auroc_rows``), a rank correlation), resampled by unit or by whole cluster, and the
settings. The bench (bench/bench_bootstrap.py) times these same functions.
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
