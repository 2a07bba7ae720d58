"""Tables and figures that combine models (the aggregate stage of the study).

Every function reads per-model files (scores, rollouts, proxy scores) and writes one table (TSV +
Markdown) and, where the paper has one, a figure. A part that needs more models than the run has
writes a row saying so instead of failing.
"""

from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from ...io import write_table  # noqa: E402
from ...report.figures import legend_outside, series_style  # noqa: E402
from ...report.figures import save as save_figure  # noqa: E402
from ...stats import bootstrap_mean_ci  # noqa: E402
from . import divergence, metaclf, proxies  # noqa: E402
from .consensus import agreement_features, consensus_labels  # noqa: E402
from .parse import INVALID_KINDS  # noqa: E402
from .stages import paths_by_patient, read_scores  # noqa: E402

log = logging.getLogger(__name__)


def load_scores(paths: dict[str, str]) -> pd.DataFrame:
    frames = [read_scores(p, m) for m, p in paths.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _labelled(scores: pd.DataFrame) -> pd.DataFrame:
    return scores[scores["note_set"] == "labelled"]


# ---------------------------------------------------------------- Table 1
def table1_expert(scores, rollouts: dict[str, pd.DataFrame], boot, out, out_md):
    rows = []
    for model, group in _labelled(scores).groupby("model", sort=False):
        row = {"model": model, "n_patients": len(group)}
        for metric in ("path_overlap", "treatment_match"):
            values = group[metric].to_numpy(float)
            mean, lo, hi = bootstrap_mean_ci(values, boot)
            row[metric] = mean
            row[f"{metric}_sem"] = float(stats.sem(values)) if len(values) > 1 else np.nan
            row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = lo, hi
        mod = group["modal_treatment_correct"].to_numpy(float)
        row["modal_treatment_accuracy"], lo, hi = bootstrap_mean_ci(mod, boot)
        row["modal_treatment_accuracy_ci_low"], row["modal_treatment_accuracy_ci_high"] = lo, hi
        ro = rollouts[model]
        ro = ro[ro["note_set"] == "labelled"]
        row["n_rollouts"] = len(ro)
        invalid = ro.loc[~ro["valid"].astype(str).eq("True"), "invalid_reason"].value_counts()
        for kind in INVALID_KINDS:
            row[f"invalid_{kind}"] = int(invalid.get(kind, 0))
        rows.append(row)
    df = pd.DataFrame(rows)
    write_table(
        df,
        out,
        out_md,
        title="Table 1: path prediction on expert-labelled notes (mean, SEM, bootstrap 95% CI)",
        notes=[
            "path_overlap and treatment_match: mean over each patient's k rollouts, then over "
            "patients; modal_treatment_accuracy: the modal final node of the k rollouts vs the "
            "label. invalid_*: rollouts by kind of invalid answer (scored as predicted, 0 when "
            "there is no path)."
        ],
    )
    return df


# ---------------------------------------------------------------- Table 3 / Figure 3
PAIRS = (("path_overlap", "self_path_overlap"), ("treatment_match", "self_treatment_share"))


def consistency_accuracy(scores, boot, bins: int, out, out_md, bins_out, bins_md, figure):
    rows = []
    for model, group in _labelled(scores).groupby("model", sort=False):
        row = {"model": model, "n_patients": len(group)}
        for acc, cons in PAIRS:
            x, y = group[cons].to_numpy(float), group[acc].to_numpy(float)
            ok = ~(np.isnan(x) | np.isnan(y))
            if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
                row[f"{acc}_r"], row[f"{acc}_p"] = np.nan, np.nan
            else:
                res = stats.pearsonr(x[ok], y[ok])
                row[f"{acc}_r"], row[f"{acc}_p"] = float(res.statistic), float(res.pvalue)
        rows.append(row)
    df = pd.DataFrame(rows)
    if len(df):
        mean_row = {"model": "mean ± SEM", "n_patients": int(df["n_patients"].sum())}
        for acc, _ in PAIRS:
            r = df[f"{acc}_r"].to_numpy(float)
            mean, lo, hi = bootstrap_mean_ci(r, boot)
            r = r[~np.isnan(r)]
            mean_row[f"{acc}_r"] = mean
            mean_row[f"{acc}_r_sem"] = float(stats.sem(r)) if len(r) > 1 else np.nan
            mean_row[f"{acc}_r_ci_low"], mean_row[f"{acc}_r_ci_high"] = lo, hi
        df = pd.concat([df, pd.DataFrame([mean_row])], ignore_index=True)
    write_table(
        df,
        out,
        out_md,
        title="Table 3: self-consistency vs accuracy, Pearson r per model",
        notes=[
            "r over patients between the k-rollout self-consistency (path overlap; modal-treatment "
            "share) and the accuracy against the expert label; NaN when either is constant or "
            "fewer than 3 patients. Last row: mean over models, SEM and bootstrap CI."
        ],
    )
    edges = np.linspace(0, 1, bins + 1)
    brows = []
    for model, group in _labelled(scores).groupby("model", sort=False):
        for acc, cons in PAIRS:
            idx = np.clip(np.digitize(group[cons].to_numpy(float), edges[1:-1]), 0, bins - 1)
            for b in range(bins):
                vals = group[acc].to_numpy(float)[idx == b]
                mean, lo, hi = bootstrap_mean_ci(vals, boot)
                brows.append(
                    {
                        "model": model,
                        "consistency": cons,
                        "accuracy_metric": acc,
                        "bin_low": edges[b],
                        "bin_high": edges[b + 1],
                        "n": len(vals),
                        "accuracy": mean,
                        "ci_low": lo,
                        "ci_high": hi,
                    }
                )
    bdf = pd.DataFrame(brows)
    write_table(bdf, bins_out, bins_md, title="Figure 3 data: accuracy by self-consistency bin")
    _plot_accuracy_by_consistency(bdf, figure)
    return df


def _plot_accuracy_by_consistency(bdf, figure):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (acc, cons) in zip(axes, PAIRS, strict=True):
        if len(bdf):
            part = bdf[(bdf["accuracy_metric"] == acc) & (bdf["n"] > 0)]
            for k, (model, g) in enumerate(part.groupby("model", sort=False)):
                mid = (g["bin_low"] + g["bin_high"]) / 2
                ax.plot(mid, g["accuracy"], label=model, **series_style(k))
        ax.set_xlabel(f"{cons} (binned)")
        ax.set_ylabel(acc)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{acc} by {cons}")
    if len(bdf):
        legend_outside(axes[1])
    else:
        axes[0].text(0.5, 0.5, "no labelled notes", ha="center")
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


# ---------------------------------------------------------------- cross-model consistency
def cross_model(scores, rollouts: dict, pool: list[str], min_agree, boot, out: dict):
    """Consensus labels, per-row agreement features, and the two cross-model proxy scores."""
    modal = scores[["model", "patient_id", "note_set", "modal_path", "modal_treatment"]]
    labels = consensus_labels(modal, min_agree)
    if len(labels):
        labels = labels.merge(
            modal[["patient_id", "note_set"]].drop_duplicates("patient_id"), on="patient_id"
        )
    write_table(labels, out["labels"])
    write_table(agreement_features(modal), out["features"])
    models = list(rollouts)
    pool_ids = (
        set(scores.loc[scores["note_set"].isin(pool), "patient_id"].astype(str))
        if len(scores)
        else set()
    )
    paths = {m: paths_by_patient(r) for m, r in rollouts.items()}
    rows = proxies.cross_model_scores(
        models,
        paths,
        labels
        if len(labels)
        else pd.DataFrame(columns=["patient_id", "path_label", "treatment_label_path"]),
        pool_ids,
        boot,
    )
    write_table(pd.DataFrame(rows, columns=proxies.COLUMNS), out["scores"])


# ---------------------------------------------------------------- Figure 2
def proxy_agreement(proxy_paths: list, cross_path, table1, boot, out: dict):
    frames = [pd.read_csv(p, sep="\t") for p in proxy_paths] + [pd.read_csv(cross_path, sep="\t")]
    scores = pd.concat(frames, ignore_index=True)
    scores["status"] = scores["status"].fillna("ok")
    write_table(
        scores,
        out["scores"],
        out["scores_md"],
        title="Proxy benchmarks: each model's accuracy on each proxy (bootstrap 95% CI)",
        notes=["coverage: share of candidate notes the proxy keeps (labels it can give)."],
    )
    expert = pd.read_csv(table1, sep="\t")
    agree = proxies.agreement(scores, expert, boot)
    write_table(
        agree,
        out["agreement"],
        out["agreement_md"],
        title="Figure 2: proxy accuracy vs expert accuracy across models",
        notes=[
            "spearman: rank correlation across models (CI: bootstrap over models, NaN below 4); "
            "rmse: root mean squared difference of the accuracies; coverage: mean share of notes "
            "the proxy labels; n_models: models with both numbers."
        ],
    )
    _plot_heatmap(agree, out["heatmap"])
    return agree


def _plot_heatmap(agree, figure):
    cols = [(s, m) for s in ("spearman", "rmse") for m in proxies.METRICS]
    mat = np.full((len(proxies.PROXIES), len(cols)), np.nan)
    cov = {}
    for i, proxy in enumerate(proxies.PROXIES):
        for j, (stat, metric) in enumerate(cols):
            sel = agree[(agree["proxy"] == proxy) & (agree["metric"] == metric)]
            if len(sel):
                mat[i, j] = sel[stat].iloc[0]
                cov[proxy] = sel["coverage"].iloc[0]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.imshow(np.nan_to_num(np.abs(mat), nan=0.0), cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            ax.text(
                j,
                i,
                "n/a" if np.isnan(mat[i, j]) else f"{mat[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=8,
            )
    ax.set_xticks(range(len(cols)), [f"{s}\n{m}" for s, m in cols], fontsize=8)
    labels = [f"{p}\n(coverage {cov.get(p, np.nan):.2f})" for p in proxies.PROXIES]
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_title("Proxy benchmarks vs expert labels (n/a: needs more models or data)")
    fig.tight_layout()
    fig.savefig(figure, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------- Table 2 / Figure 4
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
        mean, lo, hi = bootstrap_mean_ci(aucs, boot)
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
            "models (bootstrap CI over models) and the AUROC of the ROC curve averaged on a "
            "common FPR grid."
        ],
    )
    write_table(preds, out["predictions"])
    write_table(rows, out["rows"])
    for fs in feature_sets:
        _plot_roc(curves.get(fs, {}), fs, figures[fs])
    _plot_roc_sets(curves, figures["feature_sets"])
    return df, rows


def _plot_roc(curves: dict, fs: str, figure):
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
    for k, (model, tpr) in enumerate(curves.items()):
        if tpr is not None:
            style = {**series_style(k), "marker": None}  # dashes tell identical curves apart
            ax.plot(metaclf.FPR_GRID, tpr, lw=1.2, alpha=0.8, label=model, **style)
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
            style = {**series_style(k), "marker": None}  # dashes tell identical curves apart
            ax.plot(metaclf.FPR_GRID, mean, lw=1.8, label=f"{fs} (AUC {auc:.2f})", **style)
    legend_outside(ax)
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
            "(accuracy); rows per model reuse the pooled clustering. F1 CI: bootstrap over rows."
        ],
    )
    return df


# ---------------------------------------------------------------- Appendix D
def error_analysis(scores, rollouts: dict, top_n, boot, out: dict):
    summaries, long, flagged_all = [], [], []
    lab = _labelled(scores)
    for model, ro in rollouts.items():
        ro = ro[ro["note_set"] == "labelled"]
        group = lab[lab["model"] == model]
        modal = {r.patient_id: _tuple(r.modal_path) for r in group.itertuples()}
        labels = {r.patient_id: _tuple(r.label) for r in group.itertuples()}
        summary, rows, flagged = divergence.analyse(
            model, paths_by_patient(ro), modal, labels, top_n, boot
        )
        summaries.append(summary)
        long += rows
        flagged_all += flagged
    table = summaries + (
        [divergence.pooled_row(flagged_all, summaries, top_n, boot)] if summaries else []
    )
    write_table(
        pd.DataFrame(table),
        out["table"],
        out["table_md"],
        title=f"Error analysis: label errors at the model's top-{top_n} rollout divergence points",
        notes=[
            "A label error is a patient whose modal path differs from the expert label; it is "
            f"flagged when the node where it leaves the label is among the {top_n} decision nodes "
            "where the model's own rollouts most often leave its modal path (no label needed)."
        ],
    )
    write_table(
        pd.DataFrame(long, columns=["model", "source", "decision_node", "branches", "count"]),
        out["points"],
    )


def _tuple(value):
    if not value or (isinstance(value, float) and np.isnan(value)):
        return None
    return tuple(p.strip() for p in str(value).split("->"))


def settings_from(block: dict) -> metaclf.Settings:
    mc = block.get("meta_classifier") or {}
    return metaclf.Settings(
        C=float(mc.get("C", 0.1)),
        max_iter=int(mc.get("max_iter", 10000)),
        train_fraction=float(mc.get("train_fraction", 0.7)),
        seed=int(mc.get("seed", 0)),
        repeats=int(mc.get("repeats", 1)),
    )
