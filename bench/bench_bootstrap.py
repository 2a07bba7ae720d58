"""Issue #8 item 5 (interval half): the workflow's interval engine at 600 items x 20 models.

The bench times the functions the workflow calls, not an engine of its own: the study tables'
means (``oncoeval.stats.compare.mean_ci``, 60 clusters of 10 units), every pair of models'
paired difference (``paired_diff_ci``, the comparison's inverted sign-flip test, as
rules/compare.smk runs it) and a whole-set statistic's percentile bootstrap
(``oncoeval.stats.bootstrap.bootstrap_stat_ci`` of an AUROC, 10,000 resamples, by unit and by
cluster), on seeded synthetic scores.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from oncoeval.stats.bootstrap import BootstrapSettings, auroc_rows, bootstrap_stat_ci
from oncoeval.stats.compare import mean_ci, paired_diff_ci

N_MODELS, N_ITEMS, N_CLUSTERS, N_RESAMPLES = 20, 600, 60, 10_000


def _median_s(fn, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - started)
    return sorted(runs)[len(runs) // 2]


def run(out_dir):
    rng = np.random.default_rng(0)
    scores = rng.random((N_MODELS, N_ITEMS))
    clusters = np.repeat(np.arange(N_CLUSTERS), N_ITEMS // N_CLUSTERS)
    label = (rng.random(N_ITEMS) < 0.4).astype(float)
    settings = BootstrapSettings(n_resamples=N_RESAMPLES, ci=0.95, seed=0)

    def auroc(indices):
        return auroc_rows(label, scores[0], indices)

    pairs = list(itertools.combinations(range(N_MODELS), 2))
    steps = {
        "table_means": (lambda: [mean_ci(row, None, clusters) for row in scores], 3),
        "paired_differences": (
            lambda: [paired_diff_ci(scores[i], scores[j], None, clusters) for i, j in pairs],
            1,
        ),
        "auroc_by_unit": (lambda: bootstrap_stat_ci(auroc, N_ITEMS, settings), 3),
        "auroc_by_cluster": (
            lambda: bootstrap_stat_ci(auroc, N_ITEMS, settings, clusters=clusters),
            3,
        ),
    }
    timings = {name: _median_s(fn, repeats) for name, (fn, repeats) in steps.items()}
    return {
        "models": N_MODELS,
        "items": N_ITEMS,
        "clusters": N_CLUSTERS,
        "resamples": N_RESAMPLES,
        "pairs": len(pairs),
        "seconds": timings,
        "summary": [
            f"- Interval engine, {N_ITEMS} items x {N_MODELS} models in {N_CLUSTERS} clusters: "
            f"table means {timings['table_means']:.2f} s (median of 3); "
            f"{len(pairs)} paired differences {timings['paired_differences']:.2f} s (one run); "
            f"AUROC bootstrap ({N_RESAMPLES} resamples) {timings['auroc_by_unit']:.2f} s by unit, "
            f"{timings['auroc_by_cluster']:.2f} s by cluster (median of 3).",
        ],
    }
