"""Which model is better, by how much, and how sure: paired comparisons and leaderboards.

Generic over studies. A study gives, per evaluated model, one value per resampling unit and
headline measure (its ``unit_scores``), with the cluster each unit belongs to (units that share
a context: questions written from one myth, notes of one patient). Everything here resamples or
permutes whole clusters; a unit without a cluster is its own. docs/comparisons.md states the
methods; ``python -m bench coverage`` measures them. One study's tables (its headlines read from
its declaration) are written by ``oncoeval.workflow.comparison``.

Public functions the bench and the studies call:

- ``mean_ci(values, settings, clusters, kind=..., value_range=...)``: the interval of a mean,
  chosen by the measure's DECLARED kind (``binary``: a 0/1 outcome; ``mean``: a bounded score)
  and range ((0, 1); (-1, 1) for PCS), never by the values the sample holds. A share of 0/1
  outcomes over independent units gets Wilson's interval with a t quantile (n - 1 df); every
  other mean a Wilson-type score
  interval on the measure's range with the effective n of the cluster-robust standard error
  and a t quantile (G - 1 df). A sample with no spread gets effective n = G (as if each cluster
  were one draw), so with 2 clusters or more no interval has zero width.
- ``compare_arrays(a, b, clusters, kind=..., value_range=..., m=..., settings=...)``: one
  comparison row (diff, its interval, p, p_adjusted, significant, verdict, mdd). The interval is
  the inversion of the row's own test at the row's level (1 - alpha / m), so "interval excludes
  0" and "significant" never disagree: for 0/1 outcomes of independent units exact McNemar
  (binomial on the discordant pairs) with the Clopper-Pearson interval of the discordant split
  times that of the discordant share; otherwise the whole-cluster sign-flip test of the mean
  difference, inverted over shifts (``sign_flip_interval``).
- ``minimum_detectable_difference(...)``, ``mcnemar_mdd(...)`` and
  ``no_significance_possible(...)``: the mdd of the decision actually made (its test, its adjustment, its discreteness), or the sentence that no
  difference can be significant.
- ``paired_diff_ci(a, b, settings, clusters, value_range=...)``: the same inverted test at the
  settings' level, for a study table's paired differences.

Multiplicity: each study declares a primary headline measure (``Headline.primary``); its family
is every pair of evaluated models on it (m pairs), decided at alpha / m with intervals at
1 - alpha / m (Bonferroni). Other measures are descriptive (alpha, 1 - alpha, unadjusted).
Verdicts: ahead/behind (significant), equivalent within +/- delta (the printed interval inside
the margin: two one-sided tests, each at alpha / (2 m)), else not separable at this n.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ..core.schema import top_level_defaults
from .bootstrap import BootstrapSettings

_DEFAULTS = top_level_defaults("comparisons")
INTERVALS = ("auto", "t", "bca", "percentile")
ADJUSTMENTS = {"bonferroni": "Bonferroni"}
KINDS = ("mean", "binary")
# Enumerate every sign vector up to this many clusters (2^16 flips), whatever `permutations`.
EXACT_MAX_CLUSTERS = 16


@dataclass(frozen=True)
class CompareSettings:
    adjustment: str = _DEFAULTS["adjustment"]
    alpha: float = _DEFAULTS["alpha"]
    power: float = _DEFAULTS["power"]
    interval: str = _DEFAULTS["interval"]
    permutations: int = _DEFAULTS["permutations"]
    equivalence_margin: float = _DEFAULTS["equivalence_margin"]
    margins: tuple = ()  # (measure, delta) pairs; hashable, from the config's mapping
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)

    @classmethod
    def from_config(cls, config: dict) -> CompareSettings:
        """The config's ``comparisons`` and ``bootstrap`` blocks (filled here when partial)."""
        block = {**_DEFAULTS, **((config or {}).get("comparisons") or {})}
        if block["adjustment"] not in ADJUSTMENTS:
            raise ValueError(
                f"comparisons.adjustment: unknown {block['adjustment']!r}; known: "
                f"{list(ADJUSTMENTS)}"
            )
        return cls(
            adjustment=str(block["adjustment"]),
            alpha=float(block["alpha"]),
            power=float(block["power"]),
            interval=str(block["interval"]),
            permutations=int(block["permutations"]),
            equivalence_margin=float(block["equivalence_margin"]),
            margins=tuple(sorted((str(k), float(v)) for k, v in block["margins"].items())),
            bootstrap=BootstrapSettings.from_config(config),
        )

    @property
    def level(self) -> float:
        """Confidence level of the interval of a mean (the ``bootstrap.ci`` setting)."""
        return self.bootstrap.ci

    def margin(self, measure: str, value_range=(0.0, 1.0)) -> float:
        """The equivalence margin delta of a measure: ``margins`` where it names the measure,
        else ``equivalence_margin`` times the width of the measure's declared range."""
        named = dict(self.margins)
        if measure in named:
            return named[measure]
        return self.equivalence_margin * (value_range[1] - value_range[0])


# --- one sample of clustered per-unit values ---------------------------------------------------


@dataclass(frozen=True)
class Clustered:
    """Per-unit values and the cluster of each (NaN values dropped)."""

    values: np.ndarray
    codes: np.ndarray  # cluster index of each unit, 0..G-1

    @classmethod
    def of(cls, values, clusters=None) -> Clustered:
        x = np.asarray(values, dtype=float)
        if clusters is None:
            clusters = [None] * x.size
        # A unit without a cluster id is its own cluster, never one shared "missing" cluster.
        c = np.array(
            [f"unit:{i}" if pd.isna(k) or k == "" else f"id:{k}" for i, k in enumerate(clusters)]
        )
        keep = ~np.isnan(x)
        _, codes = np.unique(c[keep], return_inverse=True)
        return cls(x[keep], codes.astype(int))

    @property
    def n_units(self) -> int:
        return int(self.values.size)

    @property
    def n_clusters(self) -> int:
        return int(self.codes.max()) + 1 if self.values.size else 0

    @property
    def singletons(self) -> bool:
        """Every cluster is one unit (the units are independent)."""
        return self.n_clusters == self.n_units

    @property
    def sums(self) -> np.ndarray:
        return np.bincount(self.codes, weights=self.values, minlength=self.n_clusters)

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=self.n_clusters).astype(float)

    def mean(self) -> float:
        return float(self.values.mean()) if self.values.size else float("nan")

    def resampled_mean(self, draws) -> np.ndarray:
        """The unit mean of resampled clusters: ``draws`` (..., G) cluster indices, each drawn
        cluster entering with all its units."""
        draws = np.asarray(draws, dtype=int)
        return self.sums[draws].sum(axis=-1) / self.sizes[draws].sum(axis=-1)

    def standard_error(self) -> float:
        """Cluster-robust standard error of the unit mean (CR1: G/(G-1) small-sample factor);
        with one unit per cluster it is the usual s/sqrt(n)."""
        g = self.n_clusters
        if g < 2:
            return float("nan")
        resid = np.bincount(self.codes, weights=self.values - self.mean(), minlength=g)
        return float(math.sqrt(g / (g - 1) * np.sum(resid**2)) / self.n_units)


def is_binary(values) -> bool:
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    return bool(x.size) and bool(np.isin(x, (0.0, 1.0)).all())


def check_values(values, kind: str, value_range, what: str = "values") -> None:
    """A sample must lie in its measure's declared range (and be 0/1 for ``binary``): the
    interval is chosen by the declaration, so a value outside it is a declaration error."""
    if kind not in KINDS:
        raise ValueError(f"{what}: unknown kind {kind!r}; known: {KINDS}")
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    lo, hi = value_range
    if x.size and (x.min() < lo - 1e-9 or x.max() > hi + 1e-9):
        raise ValueError(
            f"{what}: values from {x.min():.3g} to {x.max():.3g} lie outside the declared "
            f"range [{lo:g}, {hi:g}]"
        )
    if kind == "binary" and x.size and not is_binary(x):
        raise ValueError(f"{what}: declared binary (0/1) but holds other values")


def interval_method(data: Clustered, kind: str, settings: CompareSettings) -> str:
    """The interval a mean gets: the setting, or by the declared kind under ``auto`` (Wilson
    for a share of independent units, else the effective-n score interval)."""
    if settings.interval != "auto":
        return settings.interval
    if kind == "binary" and data.singletons:
        return "wilson"
    return "score"


METHOD_NAMES = {
    "wilson": "Wilson score interval (t quantile, n - 1 df)",
    "score": "Wilson-type score interval, effective n of the cluster-robust SE, t (G - 1 df)",
    "t": "Student-t on the cluster-robust SE",
    "bca": "BCa cluster bootstrap",
    "percentile": "percentile cluster bootstrap",
}


def _wilson(share: float, n: float, q: float) -> tuple[float, float]:
    """Wilson's score interval of a share on n (possibly effective) units at quantile q."""
    centre = (share + q * q / (2 * n)) / (1 + q * q / n)
    half = q * math.sqrt(share * (1 - share) / n + q * q / (4 * n * n)) / (1 + q * q / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def effective_n(data: Clustered, kind: str, value_range) -> float:
    """The n a Wilson-type interval of the mean takes: share(1 - share) / SE^2 on the measure's
    range rescaled to [0, 1] (the cluster-robust SE; a 0/1 outcome of clustered units is
    capped at the n of units). With no spread, or a mean at the range's edge, nothing estimates
    the variance: n = G, as if each cluster were one draw. A bounded score's dispersion is
    shrunk toward a 0/1 outcome's by one pseudo-cluster (the small-sample correction)."""
    lo, hi = value_range
    share = (data.mean() - lo) / (hi - lo)
    se = data.standard_error() / (hi - lo)
    g = data.n_clusters
    if not se > 1e-12 or not 0 < share < 1:
        return float(g)
    if kind == "binary":
        return float(max(1.0, min(share * (1 - share) / se**2, data.n_units)))
    # A bounded score's dispersion (its variance over a 0/1 outcome's at that mean), shrunk by
    # one pseudo-cluster of a 0/1 outcome's: a small skewed sample that misses the tail
    # underestimates it (coverage 0.88-0.92 unshrunk at 12 units, 0.94-0.98 shrunk).
    dispersion = data.n_units * se**2 / (share * (1 - share))
    dispersion = (dispersion * (g - 1) + 1.0) / g
    return float(data.n_units / dispersion)


def score_interval(data: Clustered, kind: str, value_range, level: float) -> tuple[float, float]:
    """The effective-n Wilson-type interval of the mean on the declared range, t quantile with
    G - 1 df (the small-sample correction); its width follows the variance function of a
    bounded score, so it leans away from the range's edge as skewed scores need."""
    lo, hi = value_range
    share = min(1.0, max(0.0, (data.mean() - lo) / (hi - lo)))
    q = stats.t.ppf(0.5 + level / 2, data.n_clusters - 1)
    low, high = _wilson(share, effective_n(data, kind, value_range), q)
    return lo + low * (hi - lo), lo + high * (hi - lo)


def interval(
    data: Clustered, method: str, settings: CompareSettings, kind="mean", value_range=(0.0, 1.0)
) -> tuple[float, float]:
    """(low, high) of the unit mean at the settings' level on the declared range; NaN below 2
    clusters. Never of zero width from 2 clusters on (no spread: the effective-n bound)."""
    mean = data.mean()
    if data.n_clusters < 2:
        return float("nan"), float("nan")
    level = settings.level
    no_spread = bool(np.all(data.values == data.values[0]))
    if method == "score" or (no_spread and method != "wilson"):
        low, high = score_interval(data, kind, value_range, level)
    elif method == "wilson":
        # Wilson with a t quantile (n - 1 df): its exact coverage at 12-50 units is 0.933-0.988
        # at p = 0.05-0.95, where the z quantile dips to 0.922 (p = 0.5, n = 21)
        q = stats.t.ppf(0.5 + level / 2, data.n_units - 1)
        low, high = _wilson(data.mean(), data.n_units, q)
    elif method == "t":
        half = stats.t.ppf(0.5 + level / 2, data.n_clusters - 1) * data.standard_error()
        low, high = mean - half, mean + half
    elif method in ("bca", "percentile"):
        low, high = _bootstrap(data, method, settings.bootstrap)
    else:
        raise ValueError(f"comparisons.interval: unknown method {method!r}; known: {INTERVALS}")
    # Wilson's interval holds the observed share (its computed low at 0 of n is ~3e-17).
    low, high = min(float(low), mean), max(float(high), mean)
    return max(low, value_range[0]), min(high, value_range[1])


def _bootstrap(data: Clustered, method: str, boot: BootstrapSettings) -> tuple[float, float]:
    """scipy's bootstrap over cluster indices (BCa's jackknife leaves out whole clusters)."""
    res = stats.bootstrap(
        (np.arange(data.n_clusters),),
        lambda draws, axis=-1: data.resampled_mean(draws),
        n_resamples=boot.n_resamples,
        confidence_level=boot.ci,
        method="BCa" if method == "bca" else "percentile",
        vectorized=True,
        rng=np.random.default_rng(boot.seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# --- the studies' own tables: the same intervals, one call per mean -------------------------------


def as_compare_settings(settings=None) -> CompareSettings:
    """A study table's settings (its ``bootstrap`` block) as the comparison's, with the
    workflow's interval choice (``auto``) unless ``settings`` already is a CompareSettings."""
    if isinstance(settings, CompareSettings):
        return settings
    return CompareSettings(bootstrap=settings or BootstrapSettings())


def mean_ci(
    values, settings=None, clusters=None, *, kind: str = "mean", value_range=(0.0, 1.0)
) -> tuple[float, float, float]:
    """(mean, ci_low, ci_high) of the unit mean of ``values``, resampling whole ``clusters``
    (one id per unit; None, NaN or "": the unit is its own cluster).

    The interval follows the DECLARED ``kind`` (``binary``: a 0/1 outcome; ``mean``: a bounded
    score) and ``value_range`` ((0, 1), or (-1, 1) for PCS) of the measure, never the values
    the sample happens to hold (``interval_method``): Wilson (t quantile, n - 1 df) for a share
    of independent units,
    else the effective-n Wilson-type score interval (``score_interval``), within the range. NaN
    values are dropped (an unscored unit is not a zero); the interval is NaN below 2 clusters
    and never of zero width from 2 on. A value outside the declared range raises ValueError."""
    s = as_compare_settings(settings)
    check_values(values, kind, value_range)
    data = Clustered.of(values, clusters)
    if not data.n_units:
        return float("nan"), float("nan"), float("nan")
    low, high = interval(data, interval_method(data, kind, s), s, kind, value_range)
    return data.mean(), low, high


def interval_note(unit: str, cluster: str, n: str, settings=None) -> str:
    """The sentence every table with an interval carries: the method, the resampling unit,
    the cluster resampled whole, and which column gives n."""
    s = as_compare_settings(settings)
    if s.interval == "auto":
        method = (
            "chosen by each measure's declared kind and range: Wilson score interval (t quantile, "
            "n - 1 df) for a share of a 0/1 outcome over independent units, otherwise a Wilson-type score interval on "
            "the measure's range with the effective n of the cluster-robust standard error and a "
            "t quantile (G - 1 df, G clusters; a sample with no spread: n = G)"
        )
    else:
        method = METHOD_NAMES[s.interval]
    whole = (
        "each unit its own cluster"
        if cluster == unit
        else f"cluster: {cluster}, resampled whole (a unit without one is its own)"
    )
    return f"Intervals ({s.level:.0%}): {method}. Unit: {unit}; {whole}. n: {n}."


# --- paired tests and the intervals that invert them ---------------------------------------------


def mcnemar_exact(a, b) -> float:
    """Two-sided exact McNemar p: binomial test of the a-only successes among discordant pairs
    (at 1/2 the point-probability and doubled-tail p coincide, so it is the test that the
    Clopper-Pearson interval of the split inverts)."""
    a = np.asarray(a, dtype=float) == 1
    b = np.asarray(b, dtype=float) == 1
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


@functools.lru_cache(maxsize=64)
def _sign_vectors(g: int, permutations: int, seed: int) -> np.ndarray:
    """(K, g) sign vectors: all 2^g when few (exact), else the identity and ``permutations``
    random ones (p = (count + 1) / (permutations + 1), as scipy's permutation_test)."""
    if g <= EXACT_MAX_CLUSTERS or 2**g <= permutations + 1:
        bits = (np.arange(2**g)[:, None] >> np.arange(g)) & 1
        signs = 1.0 - 2.0 * bits
    else:
        rng = np.random.default_rng(seed)
        draws = rng.choice([-1.0, 1.0], size=(permutations, g))
        signs = np.vstack([np.ones((1, g)), draws])
    signs.flags.writeable = False  # cached: the same seed gives the same flips every call
    return signs


def _shift_bounds(diffs: Clustered, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sign vector e, the shifts delta at which it is at least as extreme as the observed
    data: |sum_g e_g (S_g - n_g delta)| >= |S - N delta| holds on the closed interval between
    (a - S) / (b - N) and (a + S) / (b + N) (a = e.S, b = e.n; the whole line for e = +-1),
    and that interval always holds the estimate S / N. So p(delta) only falls away from the
    estimate and the accepted shifts are one interval."""
    s, n = diffs.sums, diffs.sizes
    total, size = s.sum(), n.sum()
    a, b = signs @ s, signs @ n
    trivial = np.isclose(np.abs(b), size)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = (a - total) / (b - size)
        r2 = (a + total) / (b + size)
    low, high = np.minimum(r1, r2), np.maximum(r1, r2)
    # ties count as extreme (scipy's tolerance): widen by a hair so the estimate is inside
    tol = 1e-12 * max(1.0, float(np.max(np.abs(s / n))))
    low, high = np.where(trivial, -np.inf, low - tol), np.where(trivial, np.inf, high + tol)
    return low, high


def sign_flip_interval(diffs: Clustered, alpha: float, permutations: int, seed: int):
    """(p at 0, low, high) of the whole-cluster sign-flip test of the mean paired difference,
    inverted over shifts: [low, high] is every delta whose test of "mean difference = delta"
    gives p > ``alpha``, and p at 0 is the test of no difference. Under H0 swapping the two
    models' answers within a cluster changes nothing, so each cluster's summed (shifted)
    difference keeps or flips its sign. Exact (every flip) up to 16 clusters. Infinite bounds:
    no shift can be rejected at this alpha (too few clusters)."""
    if diffs.n_units == 0:
        return float("nan"), float("nan"), float("nan")
    signs = _sign_vectors(diffs.n_clusters, permutations, seed)
    low, high = _shift_bounds(diffs, signs)
    k = len(signs)
    count0 = int(np.sum((low <= 0) & (high >= 0)))
    j = math.floor(alpha * k) + 1  # accepted: at least j of the K vectors as extreme
    if j > k:
        return count0 / k, -np.inf, np.inf
    # the j-th smallest low and j-th largest high (a partition, not a sort: same values)
    return (
        count0 / k,
        float(np.partition(low, j - 1)[j - 1]),
        float(np.partition(high, k - j)[k - j]),
    )


def sign_flip_p(diffs: Clustered, n_resamples: int, seed: int) -> float:
    """Two-sided p of the whole-cluster sign-flip test of the mean paired difference (the
    test ``sign_flip_interval`` inverts)."""
    return sign_flip_interval(diffs, 0.05, n_resamples, seed)[0]


def _no_spread_bound(c: float, g: int, width: float, alpha: float) -> tuple[float, float, float]:
    """Paired differences all equal to c: the sign-flip interval is the point c. Widen it as a
    Wilson bound on 0 of g clusters departing from c (each by at most the range's width),
    and give the p at which that widened interval reaches 0."""
    q = stats.norm.ppf(1 - alpha / 2)
    u = q * q / (g + q * q)
    low, high = c - u * (c + width), c + u * (width - c)
    if c == 0:
        return 1.0, low, high
    r = abs(c) / (abs(c) + width)
    return float(2 * stats.norm.sf(math.sqrt(g * r / (1 - r)))), low, high


def mcnemar_interval(a, b, alpha: float) -> tuple[float, float, float]:
    """(exact McNemar p, low, high) of mean(a) - mean(b) for 0/1 outcomes of independent units:
    the difference is r (2 theta - 1), r the discordant share and theta the a-only share of the
    discordant pairs; the bounds combine the Clopper-Pearson intervals of theta (the interval
    exact McNemar inverts, so it excludes 1/2 exactly when p <= alpha) and of r (which keeps
    the sign, so 0 is excluded exactly when 1/2 is, and gives width with no discordant pair)."""
    a, b = np.asarray(a, dtype=float) == 1, np.asarray(b, dtype=float) == 1
    n = a.size
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    nd = only_a + only_b
    r_lo, r_hi = stats.binomtest(nd, n).proportion_ci(1 - alpha, method="exact")
    if nd == 0:
        return 1.0, -float(r_hi), float(r_hi)
    test = stats.binomtest(only_a, nd, 0.5)
    t_lo, t_hi = test.proportion_ci(1 - alpha, method="exact")
    lo_f, hi_f = 2 * t_lo - 1, 2 * t_hi - 1
    low = lo_f * (r_lo if lo_f >= 0 else r_hi)
    high = hi_f * (r_hi if hi_f >= 0 else r_lo)
    return float(test.pvalue), float(low), float(high)


TEST_NAMES = {
    "mcnemar": "exact McNemar (binomial on discordant pairs)",
    "sign_flip": "sign-flip permutation (units)",
    "cluster_sign_flip": "sign-flip permutation (whole clusters)",
}
INTERVAL_NAMES = {
    "mcnemar": "Clopper-Pearson of the discordant split x discordant share (inverts exact McNemar)",
    "sign_flip": "inverted sign-flip test (shifts not rejected)",
    "cluster_sign_flip": "inverted sign-flip test (shifts not rejected)",
}


def paired_test(a, b, clusters, kind: str, settings: CompareSettings) -> tuple[float, str]:
    """(p, test key) for aligned per-unit values of two models (no NaN): exact McNemar for a
    declared binary outcome of independent units, else the whole-cluster sign-flip test."""
    diffs = Clustered.of(np.asarray(a, float) - np.asarray(b, float), clusters)
    if kind == "binary" and diffs.singletons:
        return mcnemar_exact(a, b), "mcnemar"
    key = "sign_flip" if diffs.singletons else "cluster_sign_flip"
    return sign_flip_p(diffs, settings.permutations, settings.bootstrap.seed), key


def adjust(p_values, method: str = "bonferroni") -> np.ndarray:
    """Multiplicity-adjusted p-values (statsmodels ``multipletests``); NaN p-values stay NaN and
    do not count. The tables use Bonferroni over the primary family (``compare_arrays`` with
    its m); this is for library users adjusting p-values of their own."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    if known.any():
        out[known] = multipletests(p[known], method=method)[1]
    return out


def smallest_p(n_clusters: int) -> float:
    """The smallest two-sided p a sign-flip test (or exact McNemar) can give on this many
    clusters (discordant pairs): 2 / 2^G."""
    return min(1.0, 2.0 / 2.0**n_clusters)


def no_significance_possible(n_clusters: int, m: int, alpha: float) -> bool:
    """True when no difference of any size can be significant: m x 2 / 2^G > alpha (the
    smallest p of G clusters, or of G units all discordant, after the adjustment)."""
    return m * smallest_p(n_clusters) > alpha


def impossible_sentence(n_clusters: int, m: int) -> str:
    """What a row, the leaderboard and the terminal say instead of an mdd."""
    comparisons = "comparison" if m == 1 else "comparisons"
    return f"no difference can be significant with {n_clusters} clusters and {m} {comparisons}"


def lattice_step(values) -> float:
    """Half the spacing of a sign-flip sum of these per-unit values: u where every value is a
    multiple of one unit u (0/1 outcomes, PCS: differences in whole units), else 0 (scores).
    Such a sum moves in steps of 2u, and since ties count as extreme the test rejects only a
    full step beyond its critical value: u further out, on average."""
    x = np.abs(np.asarray(values, dtype=float))
    x = x[x > 1e-12]
    if not x.size:
        return 0.0
    unit = float(x.min())
    ratio = x / unit
    return unit if np.all(np.abs(ratio - np.round(ratio)) < 1e-9) else 0.0


def sign_flip_critical(sums, signs, j: int, step: float = 0.0) -> float:
    """The critical value q of T / sqrt(sum_g X_g^2) for cluster sums X_g: the j-th largest
    |sum_g e_g X_g| over the sign vectors e, over sqrt(sum_g X_g^2). With a lattice step u
    the sums are first rounded to multiples of u: a study of whole-unit differences holds
    whole-unit cluster sums, so its flipped sums tie (clusters summing to 0 do not move them)
    and the critical value is one of those ties, not a quantile of spread-out values."""
    x = np.asarray(sums, dtype=float)
    lattice = np.round(x / step) * step if step else x
    if np.any(lattice):  # all rounding to 0: keep the unrounded sums (some spread to scale)
        x = lattice
    c = np.partition(np.abs(signs @ x), len(signs) - j)[len(signs) - j]
    return float(c) / math.sqrt(float(x @ x))


def minimum_detectable_difference(
    diffs: Clustered, settings: CompareSettings, m: int = 1, interval=None
) -> float:
    """The true mean difference the row's own decision (the whole-cluster sign-flip test at
    alpha / m) detects with ``settings.power``, for the paired differences ``diffs`` (a
    Clustered) of a family of ``m``.

    The test rejects when the summed difference T = sum_g X_g exceeds the j-th largest
    |sum_g e_g X_g| over its sign vectors (j = floor(alpha K / m) + 1; ties count as extreme),
    i.e. when T / sqrt(sum_g X_g^2) exceeds a critical value q. At a true shift delta:

    - q is read off the row's own sign vectors (exact up to 16 clusters: the discreteness of an
      exact test) applied to the observed cluster differences, centred and shifted by delta
      (``sign_flip_critical``; in whole units where the values move in whole units, so that
      the ties of a study's whole-unit cluster sums set it); their second moment, and with it
      the null spread, grows with delta;
    - T and sum X_g^2 are those of G clusters drawn again (``MDD_DRAWS`` times, fixed seed)
      from the centred cluster differences (CR1 spread) with delta added per unit, so the power
      carries the estimate's skew and its correlation with the test's own spread;
    - where the values move in whole units (``lattice_step``: 0/1 outcomes, PCS), T and the
      flipped sums move in steps of 2u, and the test rejects only a full step beyond its
      critical value: u further out, on average.

    Per draw the least delta that rejects is the root of a quadratic, so the mdd is their
    ``settings.power`` quantile, recomputed as q moves with delta (three rounds). NaN where no
    difference can be significant (``no_significance_possible``, an unbounded row interval
    ``interval``, or a test that reaches the power at no delta); with no spread (SE 0) the
    half-width of the row's interval. An exact McNemar row's mdd is ``mcnemar_mdd``."""
    g = diffs.n_clusters
    if g < 2 or no_significance_possible(g, m, settings.alpha):
        return float("nan")
    alpha = settings.alpha / m
    seed = settings.bootstrap.seed
    if interval is None:
        interval = sign_flip_interval(diffs, alpha, settings.permutations, seed)[1:]
    low, high = interval
    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan")
    se = diffs.standard_error()
    if not se > 0:
        return float((high - low) / 2)
    signs = _sign_vectors(g, settings.permutations, seed)
    k = len(signs)
    j = math.floor(alpha * k) + 1
    if j > k:
        return float("nan")
    s, n = diffs.sums, diffs.sizes
    r = s - n * s.sum() / n.sum()  # centred cluster differences
    step = lattice_step(diffs.values)
    spread = r * math.sqrt(g / (g - 1))
    columns = np.stack([spread, n, spread**2, spread * n, n * n], axis=1)
    t_r, t_n, v_rr, v_rn, v_nn = (_cluster_draws(g, seed) @ columns).T

    def critical(delta: float) -> float:
        return sign_flip_critical(r + delta * n, signs, j, step)

    def first_rejected(q: float) -> np.ndarray:
        # per draw: T - step = a + delta t_n > q sqrt(v_rr + 2 delta v_rn + delta^2 v_nn),
        # from the larger root of the squared form on (inf where T / sqrt(sum X^2) stays
        # under q however large delta: too few clusters for this spread)
        a = t_r - step
        quad = t_n**2 - q * q * v_nn
        half = a * t_n - q * q * v_rn
        disc = half * half - quad * (a * a - q * q * v_rr)
        with np.errstate(divide="ignore", invalid="ignore"):
            root = (-half + np.sqrt(np.maximum(disc, 0.0))) / quad
        root = np.maximum(np.where(disc < 0, -np.inf, root), -a / t_n)
        return np.where(quad > 0, root, np.inf)

    normal = statistics.NormalDist()
    delta = (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(settings.power)) * se
    at = min(MDD_DRAWS - 1, math.ceil(settings.power * MDD_DRAWS) - 1)  # the power quantile
    for _ in range(3):  # q moves little with delta: a few rounds settle it
        delta = float(np.partition(first_rejected(critical(delta)), at)[at])
        if not math.isfinite(delta):
            return float("nan")
    return delta


MDD_DRAWS = 1000


@functools.lru_cache(maxsize=64)
def _cluster_draws(g: int, seed: int) -> np.ndarray:
    """(MDD_DRAWS, g): how often each of g clusters is drawn in each of MDD_DRAWS resamples
    of g clusters with replacement (cached and read-only, as the sign vectors)."""
    draws = np.random.default_rng(seed).integers(0, g, (MDD_DRAWS, g))
    counts = np.zeros((MDD_DRAWS, g))
    np.add.at(counts, (np.arange(MDD_DRAWS)[:, None], draws), 1.0)
    counts.flags.writeable = False
    return counts


def mcnemar_power(n: int, discordant: float, theta: float, alpha: float) -> float:
    """Exact power of the two-sided exact McNemar test at ``alpha`` on n independent pairs whose
    discordant share is ``discordant`` and of which a wins the share ``theta``: the binomial
    number of discordant pairs, then the binomial tail beyond each count's critical value."""
    nd = np.arange(n + 1)
    crit = stats.binom.isf(alpha / 2, np.maximum(nd, 1), 0.5)  # reject when above it
    reject = np.where(nd > 0, stats.binom.sf(crit, nd, theta), 0.0)
    return float(np.sum(stats.binom.pmf(nd, n, discordant) * reject))


@functools.lru_cache(maxsize=4096)  # a pure function of counts: tables repeat them
def mcnemar_mdd(n: int, discordant: float, alpha: float, power: float) -> float:
    """The true difference exact McNemar at ``alpha`` detects with ``power`` on n pairs: at the
    observed discordant share, a winning more of them; where even winning all of them is not
    enough, a larger discordant share, all of it won (bisection on the exact power)."""

    def solve(f, lo, hi):
        for _ in range(50):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if f(mid) >= power else (mid, hi)
        return hi

    if discordant > 0 and mcnemar_power(n, discordant, 1.0, alpha) >= power:
        return solve(
            lambda d: mcnemar_power(n, discordant, (1 + d / discordant) / 2, alpha),
            0.0,
            discordant,
        )
    if mcnemar_power(n, 1.0, 1.0, alpha) < power:
        return float("nan")
    return solve(lambda d: mcnemar_power(n, d, 1.0, alpha), discordant, 1.0)


def verdict(low: float, high: float, margin: float, a: str = "a", b: str = "b") -> str:
    """The row's verdict from its printed interval: "{a} ahead" / "{b} ahead" (excludes 0),
    "equivalent within +-delta" (inside the margin: two one-sided tests, each at alpha / (2 m)),
    else "not separable at this n"."""
    if low > 0:
        return f"{a} ahead"
    if high < 0:
        return f"{b} ahead"
    if -margin < low and high < margin:
        return f"equivalent within ±{margin:.3g}"
    return NOT_SEPARABLE


NOT_SEPARABLE = "not separable at this n"


def compare_arrays(
    a,
    b,
    clusters=None,
    *,
    kind: str = "mean",
    value_range=(0.0, 1.0),
    m: int = 1,
    settings: CompareSettings | None = None,
    margin: float | None = None,
) -> dict:
    """One comparison row of aligned per-unit values of two models (NaN pairs dropped).

    ``kind``/``value_range``: the measure's declaration; ``m``: the size of the row's family
    (1 for a descriptive row). The row is decided at alpha / m and its interval printed at
    1 - alpha / m, the interval being the inversion of the row's test: "significant" is
    exactly "interval excludes 0". Returns ``diff`` (mean a - b), ``diff_ci_low``,
    ``diff_ci_high``, ``ci_level``, ``p_value`` (unadjusted), ``p_adjusted`` (min(1, m p)),
    ``significant``, ``verdict``, ``margin``, ``test``, ``interval``, ``mdd`` (a number, or the
    sentence that no difference can be significant), ``n_units``, ``n_clusters``, ``value_a``,
    ``value_b``."""
    s = settings or CompareSettings()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    cl = None if clusters is None else np.asarray(list(clusters), dtype=object)[keep]
    a, b = a[keep], b[keep]
    check_values(a, kind, value_range, "model a")
    check_values(b, kind, value_range, "model b")
    diffs = Clustered.of(a - b, cl)
    row = {"n_units": diffs.n_units, "n_clusters": diffs.n_clusters}
    if not diffs.n_units:
        return row | {"test": "no shared scored units"}
    alpha = s.alpha / m
    width = value_range[1] - value_range[0]
    if kind == "binary" and diffs.singletons:
        key = "mcnemar"
        p, low, high = mcnemar_interval(a, b, alpha)
    else:
        key = "sign_flip" if diffs.singletons else "cluster_sign_flip"
        p, low, high = sign_flip_interval(diffs, alpha, s.permutations, s.bootstrap.seed)
        no_spread = np.all(diffs.values == diffs.values[0])
        if diffs.n_clusters >= 2 and no_spread and np.isfinite(low) and np.isfinite(high):
            p0, low, high = _no_spread_bound(diffs.mean(), diffs.n_clusters, width, alpha)
            p = max(p, p0)
    low, high = float(max(low, -width)), float(min(high, width))
    significant = bool(low > 0 or high < 0)
    delta = s.margin("", value_range) if margin is None else margin
    if no_significance_possible(diffs.n_clusters, m, s.alpha):
        mdd = impossible_sentence(diffs.n_clusters, m)
    elif key == "mcnemar":
        share = float(np.mean(a != b))
        mdd = mcnemar_mdd(diffs.n_units, share, alpha, s.power) * (value_range[1] - value_range[0])
    else:
        mdd = minimum_detectable_difference(diffs, s, m, (low, high))
    return row | {
        "value_a": float(a.mean()),
        "value_b": float(b.mean()),
        "diff": diffs.mean(),
        "diff_ci_low": low,
        "diff_ci_high": high,
        "ci_level": 1 - alpha,
        "p_value": p,
        "p_adjusted": min(1.0, m * p),
        "significant": significant,
        "verdict": verdict(low, high, delta),
        "margin": delta,
        "test": TEST_NAMES[key],
        "interval": INTERVAL_NAMES[key],
        "mdd": mdd,
    }


def paired_diff_ci(
    a, b, settings=None, clusters=None, *, value_range=(0.0, 1.0)
) -> tuple[float, float, float]:
    """(mean(a - b), ci_low, ci_high) of aligned per-unit values at the settings' level: the
    whole-cluster sign-flip test inverted over shifts (as a comparison row of a descriptive
    measure), within +- the width of the declared range; units where either is NaN are
    dropped."""
    s = as_compare_settings(settings)
    s = CompareSettings(alpha=1 - s.level, permutations=s.permutations, bootstrap=s.bootstrap)
    row = compare_arrays(a, b, clusters, value_range=value_range, settings=s)
    if "diff" not in row:
        return float("nan"), float("nan"), float("nan")
    return row["diff"], row["diff_ci_low"], row["diff_ci_high"]


# --- the study's tables -------------------------------------------------------------------------

UNIT_COLUMNS = ["measure", "unit", "cluster", "value"]
COMPARISON_COLUMNS = [
    "measure", "family", "m", "model_a", "model_b", "n_units", "n_clusters", "value_a",
    "value_b", "diff", "diff_ci_low", "diff_ci_high", "ci_level", "p_value", "p_adjusted",
    "significant", "verdict", "margin", "test", "interval", "adjustment", "mdd",
]  # fmt: skip
LEADERBOARD_COLUMNS = [
    "measure", "family", "model", "value", "ci_low", "ci_high", "n_units", "n_unscored",
    "n_clusters", "rank", "best", "p_vs_best_adjusted", "standing", "mdd", "interval",
]  # fmt: skip
PRIMARY, DESCRIPTIVE = "primary", "descriptive"
LEADER = "leader"
BEHIND = "behind the leader"


@dataclass(frozen=True)
class Measure:
    """A headline measure as compared (higher is better): its name, declared kind (``mean``:
    a bounded score; ``binary``: a per-unit 0/1 outcome), declared range, and whether it is
    the study's primary measure (its pairs are the adjusted family; others are descriptive)."""

    name: str
    kind: str = "mean"
    value_range: tuple = (0.0, 1.0)
    primary: bool = False


def _values(unit_scores: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One model's rows of one measure, indexed by unit (value NaN: the unit is unscored)."""
    rows = unit_scores[unit_scores["measure"] == measure]
    return rows.drop_duplicates("unit").set_index("unit")[["cluster", "value"]]


def compare_pair(
    a: pd.DataFrame, b: pd.DataFrame, measure: Measure, settings, m: int = 1, names=("a", "b")
) -> dict:
    """One row of the comparison table: two models' values on the units both were scored on
    (``compare_arrays`` at the measure's declaration and its family's m)."""
    joined = a.join(b[["value"]].rename(columns={"value": "value_b"}), how="inner")
    joined = joined.rename(columns={"value": "value_a"}).dropna(subset=["value_a", "value_b"])
    row = compare_arrays(
        joined["value_a"].to_numpy(float),
        joined["value_b"].to_numpy(float),
        joined["cluster"].to_numpy(),
        kind=measure.kind,
        value_range=measure.value_range,
        m=m,
        settings=settings,
        margin=settings.margin(measure.name, measure.value_range),
    )
    if "diff" in row:  # the verdict in the models' names
        row["verdict"] = verdict(row["diff_ci_low"], row["diff_ci_high"], row["margin"], *names)
    return row


def family_size(n_models: int) -> int:
    """m of the primary measure's family: every pair of evaluated models."""
    return max(1, n_models * (n_models - 1) // 2)


def comparison_table(
    scores: dict[str, pd.DataFrame], measures: list[Measure], settings: CompareSettings
) -> pd.DataFrame:
    """Every pair of models (in sorted order: a before b) per measure. The primary measure's
    rows are one family of m = every pair, decided at alpha / m with intervals at 1 - alpha / m;
    the other measures' rows are descriptive (m = 1).

    ``scores``: model -> long frame (``UNIT_COLUMNS``) of its per-unit values.
    """
    rows = []
    models = sorted(scores)
    for measure in measures:
        m = family_size(len(models)) if measure.primary else 1
        for a, b in itertools.combinations(models, 2):
            va, vb = _values(scores[a], measure.name), _values(scores[b], measure.name)
            row = {"measure": measure.name, "model_a": a, "model_b": b}
            rows.append(row | family_columns(measure.primary, m, settings))
            rows[-1] |= compare_pair(va, vb, measure, settings, m, (a, b))
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def family_columns(primary: bool, m: int, settings: CompareSettings) -> dict:
    """``family``, ``m`` and ``adjustment`` of a row."""
    if primary:
        return {
            "family": PRIMARY,
            "m": m,
            "adjustment": f"{ADJUSTMENTS[settings.adjustment]}: alpha {settings.alpha:g} / "
            f"{m}, interval {1 - settings.alpha / m:.4g}",
        }
    return {"family": DESCRIPTIVE, "m": 1, "adjustment": "none (descriptive)"}


def finish_rows(df: pd.DataFrame, settings: CompareSettings) -> pd.DataFrame:
    """Rows a study adds through its hook (judge-corrected rates, descriptive): the family
    columns, p_adjusted = p, and the verdict read from their printed interval."""
    df = df.copy()
    todo = df["family"].isna()
    for i in df.index[todo]:
        for key, value in family_columns(False, 1, settings).items():
            df.at[i, key] = value
        low, high = df.at[i, "diff_ci_low"], df.at[i, "diff_ci_high"]
        if pd.notna(low) and pd.notna(high):
            margin = settings.margin(df.at[i, "measure"])
            df.at[i, "p_adjusted"] = df.at[i, "p_value"]
            df.at[i, "significant"] = bool(low > 0 or high < 0)
            df.at[i, "margin"] = margin
            df.at[i, "ci_level"] = settings.level
            df.at[i, "verdict"] = verdict(
                low, high, margin, df.at[i, "model_a"], df.at[i, "model_b"]
            )
    df["m"] = pd.to_numeric(df["m"]).astype("Int64")
    return df


def _pair_row(comparison: pd.DataFrame, measure: str, one: str, other: str):
    if comparison is None or not len(comparison):
        return None
    hit = comparison[
        (comparison["measure"] == measure)
        & (
            ((comparison["model_a"] == one) & (comparison["model_b"] == other))
            | ((comparison["model_a"] == other) & (comparison["model_b"] == one))
        )
    ]
    return hit.iloc[0] if len(hit) else None


def value_rows(scores, measure: Measure, settings) -> list[dict]:
    """Each model's value of one measure over its scored units, with its interval (by the
    measure's declared kind and range)."""
    rows = []
    for model in scores:
        values = _values(scores[model], measure.name)
        data = Clustered.of(values["value"].to_numpy(float), values["cluster"].to_numpy())
        _, low, high = mean_ci(
            values["value"].to_numpy(float),
            settings,
            values["cluster"].to_numpy(),
            kind=measure.kind,
            value_range=measure.value_range,
        )
        rows.append(
            {
                "measure": measure.name,
                "family": PRIMARY if measure.primary else DESCRIPTIVE,
                "model": model,
                "value": data.mean(),
                "ci_low": low,
                "ci_high": high,
                "n_units": data.n_units,
                "n_unscored": int(values["value"].isna().sum()),
                "n_clusters": data.n_clusters,
                "interval": METHOD_NAMES[interval_method(data, measure.kind, settings)],
            }
        )
    return rows


def standing(row, best: str) -> str:
    """A model's standing against the leader, from their comparison row's verdict."""
    if row is None or not isinstance(row.get("verdict"), str):
        reason = "" if row is None else str(row.get("test", ""))
        return f"not compared ({reason})" if reason.startswith("not compared") else NOT_SEPARABLE
    said = row["verdict"]
    if said == f"{best} ahead":
        return BEHIND
    if said.startswith("equivalent"):
        return said.replace("equivalent", "equivalent to the leader", 1)
    if said.endswith(" ahead"):  # the other model significantly ahead: it is not behind
        return "ahead of the leader on the units both were scored on"
    return "not separable from the leader at this n"


def ranked(rows: list[dict], comparison: pd.DataFrame, settings) -> list[dict]:
    """One measure's models ranked by value (1: highest), each with its standing against the
    leader: behind (significant after adjustment), equivalent within the margin, or not
    separable at this n; and the mdd of its comparison with the leader."""
    table = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
    table["value"] = pd.to_numeric(table["value"], errors="coerce")
    if table["value"].notna().any():
        measure = table["measure"].iloc[0]
        table["rank"] = table["value"].rank(ascending=False, method="min").astype("Int64")
        table = table.sort_values(["rank", "model"], na_position="last")
        best = table["model"].iloc[0]
        pairs = [_pair_row(comparison, measure, best, m) for m in table["model"]]
        table["best"] = best
        table["p_vs_best_adjusted"] = [
            np.nan if p is None or m == best else p.get("p_adjusted")
            for m, p in zip(table["model"], pairs, strict=True)
        ]
        table["standing"] = [
            LEADER if m == best else standing(p, best)
            for m, p in zip(table["model"], pairs, strict=True)
        ]
        table["mdd"] = [
            "" if p is None or m == best else p.get("mdd")
            for m, p in zip(table["model"], pairs, strict=True)
        ]
    return table.to_dict("records")


def leaderboard(scores, measures: list[Measure], comparison, settings, extra=()) -> pd.DataFrame:
    """Every measure's ranked models; ``extra``: value rows of measures compared elsewhere
    (corrected rates, descriptive), ranked the same way."""
    groups = [value_rows(scores, m, settings) for m in measures]
    extra = pd.DataFrame(list(extra), columns=LEADERBOARD_COLUMNS)
    extra["family"] = extra["family"].fillna(DESCRIPTIVE)
    groups += [part.to_dict("records") for _, part in extra.groupby("measure", sort=False)]
    rows = [r for g in groups if g for r in ranked(g, comparison, settings)]
    return pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)


def mdd_rows(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per measure: the median minimum detectable difference over the pairs (or the sentence
    that no difference can be significant), its family, and n."""
    rows = []
    for measure, part in comparison.groupby("measure", sort=False):
        said = [v for v in part["mdd"] if isinstance(v, str) and v]
        known = pd.to_numeric(part["mdd"], errors="coerce").dropna()
        rows.append(
            {
                "measure": measure,
                "family": part["family"].iloc[0] if "family" in part else DESCRIPTIVE,
                "mdd": said[0] if said else (float(known.median()) if len(known) else np.nan),
                # rows that could not be compared (a model judged by its own verifier) have none
                "n_units": int(part["n_units"].fillna(0).max()) if len(part) else 0,
                "n_clusters": int(part["n_clusters"].fillna(0).max()) if len(part) else 0,
            }
        )
    return pd.DataFrame(rows, columns=["measure", "family", "mdd", "n_units", "n_clusters"])


def mdd_sentences(comparison: pd.DataFrame, settings: CompareSettings) -> list[str]:
    """ "With 21 units this study tells apart differences of about 0.12 in F1", per measure, or
    that no difference can be significant with its clusters and comparisons."""
    out = []
    for r in mdd_rows(comparison).itertuples():
        label = "" if r.family == PRIMARY else " (descriptive)"
        if isinstance(r.mdd, str):
            out.append(f"{r.measure}{label}: {r.mdd}, whatever its size.")
            continue
        if np.isnan(r.mdd):
            continue
        clusters = f" in {r.n_clusters} clusters" if r.n_clusters != r.n_units else ""
        out.append(
            f"{r.measure}{label}: with {r.n_units} units{clusters} this study tells apart "
            f"differences of about {r.mdd:.3g} ({settings.power:.0%} power for the decision "
            "made: its test, its adjustment; median over the pairs)."
        )
    return out


def verdict_note(settings: CompareSettings, primary: str | None, m: int) -> str:
    """What the verdict and standing words mean, with the family and its m."""
    family = (
        f"Primary measure: {primary}; its family is every pair of evaluated models (m = {m}), "
        f"each decided at alpha {settings.alpha:g} / {m} with its difference interval at "
        f"{1 - settings.alpha / m:.4g} ({ADJUSTMENTS[settings.adjustment]}). Other measures are "
        f"descriptive: alpha {settings.alpha:g}, {1 - settings.alpha:.0%} intervals, no "
        "adjustment (their verdicts describe, they do not decide)."
        if primary
        else "No primary measure: every row is descriptive."
    )
    return (
        f"{family} Verdicts: a model is ahead (behind) when the difference interval excludes 0 "
        "(exactly when p_adjusted <= alpha: the interval inverts the row's own test); "
        "equivalent within +-delta when the interval lies inside the margin "
        f"(comparisons.equivalence_margin {settings.equivalence_margin:g} of the measure's range "
        "unless comparisons.margins names it: two one-sided tests, each at alpha / (2 m)); else not "
        "separable at this n. Standing (leaderboard): each model's verdict against the leader."
    )
