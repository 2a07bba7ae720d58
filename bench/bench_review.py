"""The review plan on a simulated judge with known errors: coverage and labels saved.

Each replicate draws N evaluated answers whose true Cancer-Myth scores have shares
TRUTH (so the true PCR is TRUTH[1]) and a judge that errs by the confusion matrix JUDGE; humans
then label n answers, and the PCR is estimated four ways:

* ``random_human``: a simple random sample of n answers, the share of human label 1 (no judge;
  interval: Wilson, as the study tables);
* ``random_corrected``: the same sample, the judge's PCR corrected by Rogan-Gladen
  (oncoeval.judges.correction, unweighted: the existing correction);
* ``plan_prior``: the review plan as ``make review`` draws it before any label (stratified by
  the judge's verdict, Neyman allocation from the documented prior), corrected with design
  weights;
* ``plan_neyman``: the plan once the labels collected so far have fixed each stratum's share
  (the allocation from the true within-verdict shares).

It reports, per method and n, the mean half-width of the 95% interval and how often it covers
the true PCR, and the fewest labels that reach a mean half-width of 0.05.
"""

from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from oncoeval.judges.correction import corrected_rate
from oncoeval.review import plan
from oncoeval.stats.bootstrap import BootstrapSettings

N = 10_000
TRUTH = np.array([0.35, 0.25, 0.40])
JUDGE = np.array([[0.80, 0.15, 0.05], [0.20, 0.60, 0.20], [0.05, 0.15, 0.80]])
LABELS = (100, 150, 200, 250, 300, 350, 400, 500, 600)
REPS = 60
COVERAGE_REPS = 300
TARGET = 0.05


def _population(rng):
    truth = rng.choice(3, N, p=TRUTH)
    verdict = np.empty(N, dtype=int)
    for t in range(3):
        members = np.flatnonzero(truth == t)
        verdict[members] = rng.choice(3, members.size, p=JUDGE[t])
    return truth, verdict


def _true_shares():
    joint = TRUTH[:, None] * JUDGE
    return {h: joint[2, h] / joint[:, h].sum() for h in range(3)}


def _estimate(method, n, rng, settings):
    truth, verdict = _population(rng)
    positive = truth == 2
    if method.startswith("random"):
        picked = rng.choice(N, n, replace=False)
        if method == "random_human":
            k = int(positive[picked].sum())
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            return k / n, low, high
        r = corrected_rate(verdict == 2, positive[picked], verdict[picked] == 2, settings)
        return r.value, r.ci_low, r.ci_high
    sizes = {h: int((verdict == h).sum()) for h in range(3)}
    shares = (
        plan.stratum_positive_shares([0, 1, 2], 2) if method == "plan_prior" else _true_shares()
    )
    sds = {h: np.sqrt(p * (1 - p)) for h, p in shares.items()}
    alloc = plan.neyman_allocation(sizes, sds, n)
    picked, weights = [], []
    for h in range(3):
        members = np.flatnonzero(verdict == h)
        picked.append(rng.choice(members, alloc[h], replace=False))
        weights.append(np.full(alloc[h], sizes[h] / alloc[h]))
    picked, weights = np.concatenate(picked), np.concatenate(weights)
    r = corrected_rate(
        verdict == 2,
        positive[picked],
        verdict[picked] == 2,
        settings,
        validation_weights=weights,
    )
    return r.value, r.ci_low, r.ci_high


METHODS = ("random_human", "random_corrected", "plan_prior", "plan_neyman")


def run(out_dir) -> dict:
    settings = BootstrapSettings(n_resamples=500, seed=1)
    rng = np.random.default_rng(2026)
    true_pcr = float(TRUTH[2])
    rows = []
    for method in METHODS:
        for n in LABELS:
            est = np.array([_estimate(method, n, rng, settings) for _ in range(REPS)], float)
            rows.append(
                {
                    "method": method,
                    "labels": n,
                    "mean_half_width": float(np.nanmean((est[:, 2] - est[:, 1]) / 2)),
                    "coverage": float(np.mean((est[:, 1] <= true_pcr) & (true_pcr <= est[:, 2]))),
                    "bias": float(np.nanmean(est[:, 0]) - true_pcr),
                }
            )
    needed = {}
    for method in METHODS:
        hit = [
            r["labels"] for r in rows if r["method"] == method and r["mean_half_width"] <= TARGET
        ]
        needed[method] = min(hit) if hit else None
    n_cov = needed["plan_prior"] or LABELS[-1]
    cov = np.array(
        [_estimate("plan_prior", n_cov, rng, settings) for _ in range(COVERAGE_REPS)], float
    )
    coverage = float(np.mean((cov[:, 1] <= true_pcr) & (true_pcr <= cov[:, 2])))
    saving = {
        m: (1 - needed[m] / needed["random_human"])
        if needed[m] and needed["random_human"]
        else None
        for m in METHODS
    }
    summary = [
        f"Simulated judge (3x3 confusion, true PCR {true_pcr}), {N} evaluated answers; labels "
        f"for a mean 95% half-width <= {TARGET} (grid {LABELS}, {REPS} replicates each):",
        "",
        "| method | labels needed | saving vs random_human |",
        "|---|---|---|",
        *[
            f"| {m} | {needed[m] or f'> {LABELS[-1]}'} | "
            + (f"{saving[m]:.0%}" if saving[m] is not None else "n/a")
            + " |"
            for m in METHODS
        ],
        "",
        f"Coverage of the planned (prior) corrected PCR at {n_cov} labels: {coverage:.3f} "
        f"over {COVERAGE_REPS} replicates (nominal 0.95).",
    ]
    return {
        "rows": rows,
        "labels_needed": needed,
        "saving_vs_random_human": saving,
        "plan_prior_coverage": {"labels": n_cov, "coverage": coverage, "reps": COVERAGE_REPS},
        "summary": summary,
    }
