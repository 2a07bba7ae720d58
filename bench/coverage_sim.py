"""Simulated per-unit scores of several models with known truth, for ``python -m bench coverage``.

Every measure is a transform of one standard normal latent (a Gaussian copula), so its true
mean and the true difference between two shifted models are known exactly:

- bounded scores in [0, 1]: the Beta quantile of Phi(z) (skewed: Beta(0.5, 4.5), mean 0.1, and
  its mirror Beta(4.5, 0.5), mean 0.9; central: Beta(2, 2));
- 0/1 outcomes: z above a threshold (p = 0.05, 0.5, 0.95);
- PCS-like scores in {-1, 0, 1} (P = 0.1, 0.3, 0.6: mean 0.5): two thresholds.

Model j's score on unit i of cluster c is f(mu_j + sqrt(rho) u_c + sqrt(lam) v_i + sqrt(1 - rho -
lam) e_ij): u is shared by the cluster (rho is set so that two units of one cluster correlate 0.3
on the observed scale, the intra-cluster correlation the studies' questions-from-one-myth and
notes-of-one-patient have), v by the models on one unit (the pairing), e is the model's own.
Clustered designs have clusters of 2-5 units; independent designs one unit per cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import optimize, special, stats

ICC = 0.3
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(96)  # E[g(Z)] = sum w g(x) / sqrt(2 pi)
_GH_W = _GH_W / np.sqrt(2 * np.pi)


@dataclass(frozen=True)
class Kind:
    """One measure: its declared scale (``binary``: 0/1; ``unit``: [0, 1]; ``signed``: [-1, 1])
    and the transform of the latent. Discrete kinds give ``values`` and ``probs``; continuous
    ones a Beta(a, b)."""

    key: str
    label: str
    scale: str
    values: tuple[float, ...] = ()
    probs: tuple[float, ...] = ()
    beta: tuple[float, float] | None = None

    @property
    def discrete(self) -> bool:
        return self.beta is None

    @property
    def range(self) -> tuple[float, float]:
        return (-1.0, 1.0) if self.scale == "signed" else (0.0, 1.0)

    @cached_property
    def thresholds(self) -> np.ndarray:
        """Latent cut points: f(z) = values[0] + sum_k step_k 1{z > t_k}."""
        return special.ndtri(np.cumsum(self.probs)[:-1])

    @cached_property
    def steps(self) -> np.ndarray:
        return np.diff(self.values)

    def f(self, z: np.ndarray) -> np.ndarray:
        if self.discrete:
            return self.values[0] + (z[..., None] > self.thresholds) @ self.steps
        return stats.beta.ppf(special.ndtr(z), *self.beta)

    def mean(self, shift: float = 0.0) -> float:
        """E f(Z + shift), exactly (discrete) or by 96-point Gauss-Hermite (Beta)."""
        if self.discrete:
            return float(self.values[0] + special.ndtr(shift - self.thresholds) @ self.steps)
        return float(_GH_W @ self.f(_GH_X + shift))

    def observed_corr(self, rho: float) -> float:
        """corr(f(Z1), f(Z2)) for standard normals of correlation ``rho``."""
        mean = self.mean()
        if self.discrete:
            # f = v0 + sum_k d_k 1{z > t_k}: E[f(Z1) f(Z2)] = v0^2 + 2 v0 (E f - v0) + d' B d,
            # B_kl = P(Z1 > t_k, Z2 > t_l) (rho = 1 gives E f^2)
            t, d, v0 = self.thresholds, self.steps, self.values[0]
            mvn = stats.multivariate_normal(cov=[[1, rho], [rho, 1]])
            both = np.array([[mvn.cdf([-a, -b]) for b in t] for a in t])
            alone = special.ndtr(-np.maximum.outer(t, t))
            base = v0**2 + 2 * v0 * (mean - v0)
            return float((base + d @ both @ d - mean**2) / (base + d @ alone @ d - mean**2))
        x, y = np.meshgrid(_GH_X, _GH_X, indexing="ij")
        w = np.outer(_GH_W, _GH_W)
        fx = self.f(x)
        fy = self.f(rho * x + np.sqrt(1 - rho**2) * y)
        var = float(_GH_W @ self.f(_GH_X) ** 2) - mean**2
        return float((np.sum(w * fx * fy) - mean**2) / var)

    @cached_property
    def latent_icc(self) -> float:
        """The latent correlation that gives an observed intra-cluster correlation of ``ICC``."""
        return float(optimize.brentq(lambda r: self.observed_corr(r) - ICC, 1e-6, 0.999))

    def shift_for(self, diff: float) -> tuple[float, float]:
        """(shift of the leading model, shift of the others) whose true means differ by ``diff``:
        the leader moves up where the measure has room above, else the others move down.
        NaN where the range leaves no room."""
        lo, hi = self.range
        base = self.mean()
        if diff <= 0:
            return 0.0, 0.0
        if hi - base >= base - lo:
            if base + diff >= hi:
                return float("nan"), 0.0
            s = optimize.brentq(lambda s: self.mean(s) - base - diff, 0, 40)
            return float(s), 0.0
        if base - diff <= lo:
            return 0.0, float("nan")
        s = optimize.brentq(lambda s: base - self.mean(-s) - diff, 0, 40)
        return 0.0, float(-s)


KINDS = {
    k.key: k
    for k in (
        Kind("score_low", "score, Beta(0.5, 4.5), mean 0.1", "unit", beta=(0.5, 4.5)),
        Kind("score_high", "score, Beta(4.5, 0.5), mean 0.9", "unit", beta=(4.5, 0.5)),
        Kind("score_mid", "score, Beta(2, 2), mean 0.5", "unit", beta=(2.0, 2.0)),
        Kind("binary_05", "0/1, p = 0.05", "binary", (0.0, 1.0), (0.95, 0.05)),
        Kind("binary_50", "0/1, p = 0.5", "binary", (0.0, 1.0), (0.5, 0.5)),
        Kind("binary_95", "0/1, p = 0.95", "binary", (0.0, 1.0), (0.05, 0.95)),
        Kind("pcs", "PCS-like {-1, 0, 1}, P 0.1/0.3/0.6", "signed", (-1.0, 0.0, 1.0), (0.1, 0.3, 0.6)),
    )
}  # fmt: skip


def cluster_sizes(rng, n_clusters: int, clustered: bool) -> np.ndarray:
    return rng.integers(2, 6, n_clusters) if clustered else np.ones(n_clusters, dtype=int)


def pair_corr(rho: float = 0.0) -> float:
    """The latent correlation of two models on one unit (the share of the unit's own
    variance that they share): half of what the cluster leaves."""
    return (1 - rho) / 2


def discordant(kind: Kind, lead: float, rest: float) -> tuple[float, float]:
    """(P(a != b), P(a = 1, b = 0)) for two models' 0/1 outcomes on one independent unit whose
    latent means are ``lead`` and ``rest``, paired as ``draw`` pairs them."""
    t = float(kind.thresholds[0])
    pa, pb = special.ndtr(lead - t), special.ndtr(rest - t)
    c = pair_corr(0.0)
    both = stats.multivariate_normal(cov=[[1, c], [c, 1]]).cdf([lead - t, rest - t])
    return float(pa + pb - 2 * both), float(pa - both)


def draw(kind: Kind, rng, n_clusters: int, clustered: bool, shifts) -> tuple:
    """One study: (scores (models x units), cluster id per unit or None) for models whose latent
    means are ``shifts``."""
    sizes = cluster_sizes(rng, n_clusters, clustered)
    codes = np.repeat(np.arange(n_clusters), sizes)
    rho = kind.latent_icc if clustered else 0.0
    lam = pair_corr(rho)
    shifts = np.asarray(shifts, dtype=float)[:, None]
    shared = np.sqrt(rho) * rng.standard_normal(n_clusters)[codes]
    shared = shared + np.sqrt(lam) * rng.standard_normal(codes.size)
    own = np.sqrt(1 - rho - lam) * rng.standard_normal((shifts.shape[0], codes.size))
    scores = kind.f(shifts + shared + own)
    return scores, (codes if clustered else None)


def enumerate_independent(kind: Kind, n: int, limit: int):
    """Every sample of ``n`` independent units of a discrete kind, as (counts of each value,
    probability), where there are at most ``limit``; else None (simulate instead)."""
    k = len(kind.values)
    if not kind.discrete or special.comb(n + k - 1, k - 1) > limit:
        return None
    if k == 2:
        ones = np.arange(n + 1)
        pmf = stats.binom.pmf(ones, n, kind.probs[1])
        return [((n - j, j), p) for j, p in zip(ones, pmf, strict=True)]
    out = []
    for a in range(n + 1):
        for b in range(n - a + 1):
            counts = (a, b, n - a - b)
            out.append((counts, float(stats.multinomial.pmf(counts, n, kind.probs))))
    return out
