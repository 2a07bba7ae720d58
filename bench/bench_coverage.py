"""Coverage of the 95% intervals at the studies' small n (issue #26 item 4).

Simulates samples whose true mean is known and counts how often each interval method of
oncoeval.compare contains it: shares of a binary outcome (true share
drawn from U(0.1, 0.9) per sample, so coverage is averaged over p) and means of bounded scores at n = 12,
20 and 50 independent units, paired differences of two correlated bounded scores, and clustered
data (20 clusters of 1-5 units, intra-cluster correlation 0.3) as shares and as bounded scores.
A 95% interval should cover 0.93-0.97 of the time. ``auto`` is what the workflow uses (Wilson for
a share of independent units, else Student-t on the cluster-robust SE); ``bca`` and
``percentile`` are scipy's cluster bootstraps. tests/spine/test_compare.py runs the fast methods
on fewer repetitions.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from scipy import stats

from oncoeval.compare import Clustered, CompareSettings, interval, interval_method
from oncoeval.stats import BootstrapSettings

ICC = 0.3


def _clusters(rng, n_clusters: int) -> np.ndarray:
    return np.repeat(np.arange(n_clusters), rng.integers(1, 6, n_clusters))


def scenario(name: str, n: int, rng):
    """(values, clusters or None, kind, true mean) of one simulated sample."""
    if name == "share":  # the true share drawn anew per sample: coverage averaged over p
        p = rng.uniform(0.1, 0.9)
        return rng.binomial(1, p, n).astype(float), None, "binary", p
    if name == "bounded mean":  # skewed scores in [0, 1], as F1 or overlap
        return rng.beta(2, 5, n), None, "mean", 2 / 7
    if name == "paired difference":  # two correlated bounded scores, true difference 0.1
        base = rng.beta(2, 2, n)
        a = np.clip(base + 0.1 + rng.normal(0, 0.15, n), 0, 1)
        b = np.clip(base + rng.normal(0, 0.15, n), 0, 1)
        return a - b, None, "mean", PAIRED_TRUTH
    clusters = _clusters(rng, n)
    if name == "clustered share":  # beta-binomial: ICC = 1 / (a + b + 1) = 0.3
        ab = 1 / ICC - 1
        p = rng.beta(ab / 2, ab / 2, n)[clusters]
        return rng.binomial(1, p).astype(float), clusters, "binary", 0.5
    if name == "clustered bounded mean":  # Phi(u + e), latent ICC 0.3
        latent = rng.normal(0, np.sqrt(ICC), n)[clusters]
        latent += rng.normal(0, np.sqrt(1 - ICC), clusters.size)
        return stats.norm.cdf(latent), clusters, "mean", 0.5  # Phi of a symmetric latent
    raise ValueError(name)


def _paired_truth() -> float:
    """E[clip(B + 0.1 + e1) - clip(B + e2)], B ~ Beta(2, 2), e ~ N(0, 0.15): by a large sample."""
    rng = np.random.default_rng(12345)
    base = rng.beta(2, 2, 2_000_000)
    a = np.clip(base + 0.1 + rng.normal(0, 0.15, base.size), 0, 1)
    b = np.clip(base + rng.normal(0, 0.15, base.size), 0, 1)
    return float(np.mean(a - b))


PAIRED_TRUTH = _paired_truth()
# (scenario, n): n units, or n clusters for the clustered ones.
CASES = [
    *((s, n) for s in ("share", "bounded mean") for n in (12, 20, 50)),
    ("paired difference", 12),
    ("paired difference", 21),
    ("clustered share", 20),
    ("clustered bounded mean", 20),
]


def coverage(name: str, n: int, method: str, reps: int, seed: int = 0, n_resamples=999) -> float:
    """Share of ``reps`` simulated samples whose interval (``method``) contains the truth."""
    rng = np.random.default_rng(seed)
    settings = CompareSettings(
        interval=method, bootstrap=BootstrapSettings(n_resamples=n_resamples, seed=seed)
    )
    hits = 0
    for _ in range(reps):
        values, clusters, kind, truth = scenario(name, n, rng)
        data = Clustered.of(values, clusters)
        chosen = interval_method(data, kind, settings)
        low, high = interval(data, chosen, settings)
        hits += bool(low <= truth <= high)
    return hits / reps


def run(out_dir: Path) -> dict:
    reps = {"auto": 4000, "bca": 1000, "percentile": 1000}
    rows, summary = [], []
    started = time.perf_counter()
    for name, n in CASES:
        row = {"scenario": name, "n": n}
        for method, r in reps.items():
            row[method] = round(coverage(name, n, method, r), 3)
        rows.append(row)
    summary.append(
        "Coverage of nominal 95% intervals (auto: 4000 repetitions; bca and percentile: 1000, "
        "999 resamples each). n: units, or clusters (1-5 units each, ICC 0.3) for clustered rows."
    )
    summary.append("")
    summary.append("| scenario | n | auto (workflow) | BCa | percentile |")
    summary.append("|---|---|---|---|---|")
    for r in rows:
        summary.append(
            f"| {r['scenario']} | {r['n']} | {r['auto']:.3f} | {r['bca']:.3f} | "
            f"{r['percentile']:.3f} |"
        )
    return {"rows": rows, "seconds": round(time.perf_counter() - started, 1), "summary": summary}
