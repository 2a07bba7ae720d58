"""Self-consistency: Table 3 and Figure 3 (accuracy by self-consistency bin), and the
cross-model consensus labels, agreement features and proxy scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ...core.format import column_label
from ...core.io import as_written, write_table
from ...plotting import label_bars, legend_outside, note_empty, plt
from ...plotting import save as save_figure
from ...stats.compare import interval_note, mean_ci
from . import proxies
from .consensus import agreement_features, consensus_labels
from .parse import paths_by_patient
from .score import labelled

PAIRS = (
    ("path_overlap", "modal_path_overlap", "self_path_overlap"),
    ("treatment_match", "modal_treatment_correct", "self_treatment_share"),
)


def bin_centres(max_consistency: float, bins: int = 5) -> np.ndarray:
    """The study's bin centres ``linspace(max/bins, max, bins)`` (max over all models)."""
    return np.linspace(max_consistency / bins, max_consistency, bins)


def binned_accuracy(consistency, accuracy, centres) -> pd.DataFrame:
    """Per centre: notes nearest to it (ties to the lower centre), mean accuracy, SEM (ddof 1)."""
    x, y = np.asarray(consistency, float), np.asarray(accuracy, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    nearest = np.abs(x[:, None] - centres[None, :]).argmin(axis=1) if len(x) else np.array([])
    rows = []
    for b, centre in enumerate(centres):
        vals = y[nearest == b]
        rows.append(
            {
                "bin_centre": float(centre),
                "n": len(vals),
                "accuracy": float(vals.mean()) if len(vals) else np.nan,
                "sem": float(stats.sem(vals)) if len(vals) > 1 else np.nan,
            }
        )
    return pd.DataFrame(rows)


def binned_r(bins: pd.DataFrame) -> float:
    """Pearson r between the centres and the mean accuracies of the non-empty bins."""
    part = bins[bins["n"] > 0]
    if len(part) < 2 or np.ptp(part["accuracy"]) == 0:
        return float("nan")
    return float(stats.pearsonr(part["bin_centre"], part["accuracy"]).statistic)


def _note_r(x, y) -> tuple[float, float]:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return np.nan, np.nan
    res = stats.pearsonr(x[ok], y[ok])
    return float(res.statistic), float(res.pvalue)


def consistency_accuracy(scores, boot, bins: int, out, out_md, bins_out, bins_md, figure):
    """Table 3: per model, r between the bin centres and the binned accuracy (the paper's
    statistic); the per-note r stays as an extra column. The bins also feed Figure 3."""
    lab = labelled(scores)
    centres = {
        cons: bin_centres(float(np.nanmax(lab[cons])) if lab[cons].notna().any() else 1.0, bins)
        for _, _, cons in PAIRS
    }
    rows, brows = [], []
    for model, group in lab.groupby("model", sort=False):
        row = {"model": model, "n_patients": len(group)}
        for metric, acc, cons in PAIRS:
            table = binned_accuracy(group[cons], group[acc], centres[cons])
            row[f"{metric}_r"] = binned_r(table)
            row[f"{metric}_note_r"], row[f"{metric}_note_p"] = _note_r(
                group[cons].to_numpy(float), group[metric].to_numpy(float)
            )
            for b in table.to_dict("records"):
                brows.append({"model": model, "consistency": cons, "accuracy_metric": acc, **b})
        rows.append(row)
    df = pd.DataFrame(rows)
    if len(df):
        mean_row = {"model": "mean ± SEM", "n_patients": int(df["n_patients"].sum())}
        for metric, _, _ in PAIRS:
            r = df[f"{metric}_r"].to_numpy(float)
            mean, lo, hi = mean_ci(r, boot, value_range=(-1.0, 1.0))  # correlations
            r = r[~np.isnan(r)]
            mean_row[f"{metric}_r"] = mean
            mean_row[f"{metric}_r_sem"] = float(stats.sem(r)) if len(r) > 1 else np.nan
            mean_row[f"{metric}_r_ci_low"], mean_row[f"{metric}_r_ci_high"] = lo, hi
        df = pd.concat([df, pd.DataFrame([mean_row])], ignore_index=True)
    write_table(
        df,
        out,
        out_md,
        title="Table 3: self-consistency vs accuracy, Pearson r per model",
        notes=[
            f"Notes are binned by self-consistency to the nearest of {bins} centres "
            "linspace(max/5, max, 5) (max over all models); *_r is Pearson r between the centres "
            "and the mean accuracy of the non-empty bins (accuracy of the modal path: path "
            "overlap; of the modal final node: treatment match). *_note_r: r over single notes "
            "(mean accuracy of the k rollouts), an extra. Last row: mean over models, SEM, "
            "and its interval: "
            + interval_note("model (its r)", "model", "the models with an r", boot)
        ],
    )
    bdf = pd.DataFrame(
        brows,
        columns=["model", "consistency", "accuracy_metric", "bin_centre", "n", "accuracy", "sem"],
    )
    write_table(bdf, bins_out, bins_md, title="Figure 3 data: accuracy by self-consistency bin")
    _plot_accuracy_by_consistency(bdf, figure)
    return df


def _plot_accuracy_by_consistency(bdf, figure):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (_, acc, cons) in zip(axes, PAIRS, strict=True):
        part = bdf[bdf["accuracy_metric"] == acc] if len(bdf) else bdf
        models = list(dict.fromkeys(part["model"])) if len(part) else []
        width = 0.8 / max(len(models), 1)
        for i, model in enumerate(models):
            g = part[part["model"] == model]
            bars = ax.bar(
                np.arange(len(g)) + i * width,
                g["accuracy"],
                width=width,
                yerr=g["sem"],
                capsize=3,
                label=model,
            )
            label_bars(ax, bars, g["accuracy"], g["n"], fontsize=6)
        if models:
            centres = part[part["model"] == models[0]]["bin_centre"]
            ax.set_xticks(
                np.arange(len(centres)) + width * (len(models) - 1) / 2,
                [f"{c:.2f}" for c in centres],
            )
        ax.set_xlabel(f"{column_label(cons)} (nearest bin centre)")
        ax.set_ylabel(column_label(acc))
        ax.set_ylim(0, 1.2)  # room for the value labels
        ax.set_title(f"{column_label(acc)} by {column_label(cons)}")
        # Unscored notes are not in the bins; the caption of the bins table counts them.
        note_empty(ax, int(part["n"].sum()) if len(part) else 0, None, "labelled notes")
    legend_outside(axes[1])
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


def cross_model(scores, rollouts: dict, pool: list[str], min_agree, boot, out: dict, delta):
    """Consensus labels, per-row agreement features, and the two cross-model proxy scores;
    returns the features and the scores as written."""
    modal = scores[
        [
            "model",
            "patient_id",
            "note_set",
            "modal_path",
            "modal_treatment",
            "self_path_overlap",
            "self_treatment_share",
        ]
    ]
    labels = consensus_labels(modal, min_agree, delta)
    if len(labels):
        labels = labels.merge(
            modal[["patient_id", "note_set"]].drop_duplicates("patient_id"), on="patient_id"
        )
    write_table(labels, out["labels"])
    features = agreement_features(modal)
    write_table(features, out["features"])
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
        else pd.DataFrame(columns=["patient_id", "path_label", "treatment_label"]),
        pool_ids,
        boot,
    )
    cross = pd.DataFrame(rows, columns=proxies.COLUMNS)
    write_table(cross, out["scores"])
    # Later tables build on the published numbers.
    return as_written(features, dtype={"patient_id": str}), as_written(cross)
