"""Statistics benchmark (issue #8 item 5), meta-classifier half: the CancerGUIDE meta-classifier
grid on 8 models x 121 patients with synthetic features, in seconds.

The grid is what the guidelines study runs: five feature sets x eight held-out models, each a
StandardScaler + LogisticRegression(L2, C=0.1, lbfgs, class-balanced) fit on the other models'
rows of 70% of the patients, AUROC with a 1000-resample bootstrap CI on the held-out rows, and the
ROC curves averaged on a common FPR grid. Measured once with the bootstrap (as the workflow runs
it) and once without, so the share of the time spent resampling AUROCs shows.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from oncoeval.config.checks import filled_study_block
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines import metaclf
from oncoeval.studies.guidelines.tables_meta import settings_from

# The study's default meta-classifier settings (the schema's).
SETTINGS = settings_from(filled_study_block({}, "guidelines"))


def synthetic_rows(n_models: int = 8, n_patients: int = 121, seed: int = 0) -> pd.DataFrame:
    """Rows whose correctness depends (noisily) on consistency, as in the study."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        skill = rng.uniform(0.2, 0.6)
        synth = {c: rng.uniform() for c in metaclf.SYNTH + metaclf.CONS}
        for p in range(n_patients):
            latent = rng.normal()
            correct = int(latent + rng.normal(scale=0.8) > -skill)
            cons = 1 / (1 + np.exp(-(latent + rng.normal(scale=1.0))))
            rows.append(
                {
                    "model": f"m{m}",
                    "patient_id": f"p{p:03d}",
                    "correct": correct,
                    "self_path_overlap": cons,
                    "self_treatment_share": np.clip(cons + rng.normal(scale=0.1), 0, 1),
                    "cross_path_agreement": np.clip(cons + rng.normal(scale=0.2), 0, 1),
                    "cross_treatment_agreement": np.clip(cons + rng.normal(scale=0.15), 0, 1),
                    **synth,
                }
            )
    return pd.DataFrame(rows)


def _grid(rows, boot) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    table, curves, _ = metaclf.run_grid(rows, list(metaclf.FEATURE_SETS), SETTINGS, boot)
    for per_model in curves.values():
        metaclf.mean_roc(list(per_model.values()))
    return time.perf_counter() - started, table


def run(out_dir: Path) -> dict:
    rows = synthetic_rows()
    with_boot, table = _grid(rows, BootstrapSettings(n_resamples=1000, seed=0))
    no_boot, _ = _grid(rows, BootstrapSettings(n_resamples=100, seed=0))
    mean_auroc = {
        fs: float(np.nanmean([t["auroc"] for t in table if t["feature_set"] == fs]))
        for fs in metaclf.FEATURE_SETS
    }
    fits = len(table)
    return {
        "models": 8,
        "patients": 121,
        "fits": fits,
        "seconds_with_bootstrap_1000": round(with_boot, 3),
        "seconds_with_bootstrap_100": round(no_boot, 3),
        "mean_auroc": mean_auroc,
        "summary": [
            f"- meta-classifier grid, 8 models x 121 patients, {fits} held-out fits (5 feature "
            f"sets): {with_boot:.2f} s with 1000-resample AUROC CIs, {no_boot:.2f} s with 100 "
            f"(ratio {with_boot / no_boot:.2f}x; the CIs are vectorised rank-sum AUROCs).",
            "- mean AUROC on the synthetic features: "
            + ", ".join(f"{k} {v:.2f}" for k, v in mean_auroc.items()),
        ],
    }
