"""Table 2 / Figure 4: the meta-classifier predicting correct traces (held-out models, ROC per
feature set), and the clustering of traces."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.io import as_written, write_table
from ...plotting import legend_outside, plt, series_style
from ...plotting import save as save_figure
from ...stats.compare import interval_note, mean_ci
from . import metaclf


def settings_from(block: dict) -> metaclf.Settings:
    """The meta-classifier settings of the filled study block."""
    mc = block["meta_classifier"]
    return metaclf.Settings(
        C=float(mc["C"]),
        max_iter=int(mc["max_iter"]),
        train_fraction=float(mc["train_fraction"]),
        seed=int(mc["seed"]),
        repeats=int(mc["repeats"]),
    )


def meta_classifier(
    scores, cross_features, proxy_scores, settings, feature_sets, boot, out, figures
):
    rows = metaclf.build_rows(scores, cross_features, proxy_scores)
    table, curves, preds = metaclf.run_grid(rows, feature_sets, settings, boot)
    df = pd.DataFrame(table)
    means = []
    for fs in feature_sets:
        part = df[(df["feature_set"] == fs)] if len(df) else df
        aucs = part["auroc"].to_numpy(float) if "auroc" in part else np.array([])
        mean, lo, hi = mean_ci(aucs, boot)
        mean_curve = metaclf.mean_roc(list(curves.get(fs, {}).values()))
        means.append(
            {
                "held_out_model": "mean over models",
                "feature_set": fs,
                "auroc": mean,
                "auroc_ci_low": lo,
                "auroc_ci_high": hi,
                "accuracy": part["accuracy"].mean() if "accuracy" in part else np.nan,
                "f1": part["f1"].mean() if "f1" in part else np.nan,
                "status": "ok" if mean == mean else "needs >= 2 models with two-class test rows",
                "auroc_of_mean_curve": float(np.trapezoid(mean_curve, metaclf.FPR_GRID))
                if mean_curve is not None
                else np.nan,
            }
        )
    df = pd.concat([df, pd.DataFrame(means)], ignore_index=True)
    cols = [
        "held_out_model",
        "feature_set",
        "auroc",
        "auroc_ci_low",
        "auroc_ci_high",
        "accuracy",
        "f1",
    ]
    df = df.reindex(columns=cols + [c for c in df.columns if c not in cols])
    write_table(
        df,
        out["table"],
        out["table_md"],
        title="Meta-classifier: is the modal final treatment correct? (held-out models)",
        notes=[
            f"Logistic regression (L2, C={settings.C}, lbfgs, class-balanced, standardised), "
            f"trained on the other models' rows of {settings.train_fraction:.0%} of the patients, "
            f"tested on the held-out model's other patients; {settings.repeats} split(s), seed "
            f"{settings.seed}. accuracy and F1 at probability 0.5. Mean rows: AUROC averaged over "
            "models and the AUROC of the ROC curve averaged on a common FPR grid. The mean "
            "row's "
            + interval_note(
                "held-out model (its AUROC)", "model", "the models with an AUROC", boot
            ),
            "Per-model AUROC intervals: percentile bootstrap of the AUROC of the pooled test "
            "rows, drawing whole patients (a patient tested in several splits is one cluster; "
            "a statistic of the whole set). n: n_test rows.",
        ],
    )
    write_table(preds, out["predictions"])
    write_table(rows, out["rows"])
    for fs in feature_sets:
        _plot_roc(curves.get(fs, {}), fs, figures[fs])
    _plot_roc_sets(curves, figures["feature_sets"])
    # The clustering builds on the rows as published.
    return df, as_written(rows, dtype={"patient_id": str})


def _plot_roc(curves: dict, fs: str, figure):
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
    for k, (model, tpr) in enumerate(curves.items()):
        if tpr is not None:
            # Dashes and markers, the markers staggered per curve: identical curves stay apart.
            style = {**series_style(k), "markevery": (2 * k, 10)}
            auc = np.trapezoid(tpr, metaclf.FPR_GRID)
            ax.plot(
                metaclf.FPR_GRID, tpr, lw=1.2, alpha=0.8, label=f"{model} (AUC {auc:.2f})", **style
            )
    mean = metaclf.mean_roc(list(curves.values()))
    if mean is not None:
        ax.plot(metaclf.FPR_GRID, mean, lw=2.5, color="black", label="mean (common FPR grid)")
        legend_outside(ax)
    else:
        ax.text(0.5, 0.5, "needs >= 2 models\nwith two-class test rows", ha="center")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(f"ROC, feature set {fs}")
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


def _plot_roc_sets(curves: dict, figure):
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
    for k, (fs, per_model) in enumerate(curves.items()):
        mean = metaclf.mean_roc(list(per_model.values()))
        if mean is not None:
            auc = np.trapezoid(mean, metaclf.FPR_GRID)
            # Dashes and markers, the markers staggered per curve: identical curves stay apart.
            style = {**series_style(k), "markevery": (2 * k, 10)}
            ax.plot(metaclf.FPR_GRID, mean, lw=1.8, label=f"{fs} (AUC {auc:.2f})", **style)
    if not legend_outside(ax):
        ax.text(0.5, 0.5, "no ROC curve: needs >= 2 models\nwith two-class test rows", ha="center")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("ROC by feature set, averaged over held-out models")
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


def clustering(rows, seed, boot, out, out_md):
    df = pd.DataFrame(metaclf.clustering_rows(rows, seed, boot))
    write_table(
        df,
        out,
        out_md,
        title="Unsupervised: k-means (2 clusters) on consistency features (Appendix F)",
        notes=[
            "Clusters are mapped to correct/incorrect by the better of the two assignments "
            "(accuracy); rows per model reuse the pooled clustering. Intervals "
            f"({boot.ci:.0%}) of F1: percentile bootstrap of the statistic of the whole set. "
            "Unit: row (one model's answer to one note); cluster: patient, resampled whole "
            "(its rows across models together). n: n.",
        ],
    )
    return df
