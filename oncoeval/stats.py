"""Bootstrap confidence intervals shared by every study (percentile method, seeded).

All resampling goes through ``scipy.stats.bootstrap``. Values are one number per resampling unit
(patient, question, note): a study that scores several rows per unit averages them per unit
first, then bootstraps over units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class BootstrapSettings:
    n_resamples: int = 1000
    ci: float = 0.95
    seed: int = 0

    @classmethod
    def from_config(cls, config: dict) -> BootstrapSettings:
        block = (config or {}).get("bootstrap") or {}
        return cls(
            n_resamples=int(block.get("n_resamples", 1000)),
            ci=float(block.get("ci", 0.95)),
            seed=int(block.get("seed", 0)),
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
