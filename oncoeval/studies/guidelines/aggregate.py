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

from ...io import read_jsonl, write_table  # noqa: E402
from ...report.figures import label_bars, legend_outside, note_empty, series_style  # noqa: E402
from ...report.figures import save as save_figure  # noqa: E402
from ...stats import bootstrap_mean_ci  # noqa: E402
from . import compliance, divergence, metaclf, proxies  # noqa: E402
from .consensus import agreement_features, consensus_labels  # noqa: E402
from .metrics import against_label, path_overlap, treatment_match  # noqa: E402
from .parse import INVALID_KINDS, paths_by_patient, read_rollouts  # noqa: E402
from .score import read_scores  # noqa: E402

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
        labels = {r.patient_id: _tuple(r.label) for r in group.itertuples()}
        paths = paths_by_patient(ro)
        row.update(
            compliance.count_pairs(
                (p, label) for pid, label in labels.items() for p in paths.get(pid, [])
            )
        )
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
            "there is no path), except invalid_generation_error: failed calls, left unscored. "
            "tp/fn/fp/tn: rollouts by guideline-compliance cell (positive = "
            "NOT_GUIDELINE_COMPLIANT); unanswered: rollouts without a path."
        ],
    )
    return df


# ---------------------------------------------------------------- annotators
def annotator_table(notes: list[dict], rollouts: dict[str, pd.DataFrame], out, out_md):
    """Agreement between the annotators of doubly annotated notes (path overlap and treatment
    match of one label against the other, every pair of usable labels of a note), beside each
    model's accuracy against each annotator's labels (mean over the k rollouts, then notes)."""
    rows = []
    pairs = []
    for note in notes:
        usable = [lab for lab in note.get("labels") or [] if lab.get("label_path")]
        for i, first in enumerate(usable):
            for second in usable[i + 1 :]:
                a, b = tuple(first["label_path"]), tuple(second["label_path"])
                pairs.append((path_overlap([a, b]), treatment_match(a, b)))
    rows.append(
        {
            "scope": "between annotators",
            "annotator": "",
            "n_notes": len(pairs),
            "path_overlap": float(np.mean([p for p, _ in pairs])) if pairs else np.nan,
            "treatment_match": float(np.mean([t for _, t in pairs])) if pairs else np.nan,
        }
    )
    for model, ro in rollouts.items():
        paths = paths_by_patient(ro[ro["note_set"] == "labelled"])
        per_annotator: dict[str, list[dict]] = {}
        for note in notes:
            for i, lab in enumerate(note.get("labels") or []):
                got = paths.get(note["patient_id"])
                if lab.get("label_path") and got:
                    name = lab.get("annotator") or f"label {i + 1}"
                    per_annotator.setdefault(name, []).append(
                        against_label(got, tuple(lab["label_path"]))
                    )
        for name, scored in per_annotator.items():
            rows.append(
                {
                    "scope": model,
                    "annotator": name,
                    "n_notes": len(scored),
                    "path_overlap": float(np.mean([s["path_overlap"] for s in scored])),
                    "treatment_match": float(np.mean([s["treatment_match"] for s in scored])),
                }
            )
    write_table(
        pd.DataFrame(rows),
        out,
        out_md,
        title="Annotators: agreement between experts beside the models' accuracy per annotator",
        notes=[
            "between annotators: pairs of usable labels of the same note (n_notes = pairs); "
            "model rows: accuracy against that annotator's labels (the notes they labelled)."
        ],
    )


# ---------------------------------------------------------------- Table 3 / Figure 3
# (accuracy of the modal answer, self-consistency signal, per-note accuracy for the extra r)
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
    lab = _labelled(scores)
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
            mean, lo, hi = bootstrap_mean_ci(r, boot)
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
            "bootstrap CI."
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
        ax.set_xlabel(f"{cons} (nearest bin centre)")
        ax.set_ylabel(acc)
        ax.set_ylim(0, 1.2)  # room for the value labels
        ax.set_title(f"{acc} by {cons}")
        # Unscored notes are not in the bins; the caption of the bins table counts them.
        note_empty(ax, int(part["n"].sum()) if len(part) else 0, None, "labelled notes")
    legend_outside(axes[1])
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


# ---------------------------------------------------------------- cross-model consistency
def cross_model(scores, rollouts: dict, pool: list[str], min_agree, boot, out: dict, delta):
    """Consensus labels, per-row agreement features, and the two cross-model proxy scores."""
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
        else pd.DataFrame(columns=["patient_id", "path_label", "treatment_label"]),
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
    compliance_table(scores, expert, out["compliance"], out["compliance_md"])
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


def compliance_table(proxy_scores, expert, out, out_md):
    """Guideline-compliance cells and scores per model and benchmark (expert labels first)."""
    rows = []
    sources = [("expert", expert)] + [
        (
            proxy,
            proxy_scores[
                (proxy_scores["proxy"] == proxy) & (proxy_scores["metric"] == "path_overlap")
            ],
        )
        for proxy in proxies.PROXIES
    ]
    for benchmark, part in sources:
        for r in part.to_dict("records"):
            cells = {c: int(r.get(c, 0) or 0) for c in compliance.CELLS}
            rows.append(
                {"model": r["model"], "benchmark": benchmark, **cells, **compliance.metrics(cells)}
            )
    write_table(
        pd.DataFrame(
            rows,
            columns=[
                "model",
                "benchmark",
                *compliance.CELLS,
                "accuracy",
                "precision",
                "recall",
                "f1",
            ],
        ),
        out,
        out_md,
        title="Guideline compliance: NOT_GUIDELINE_COMPLIANT predicted vs labelled",
        notes=[
            "Positive = NOT_GUIDELINE_COMPLIANT. Counted over every scored prediction (each "
            "rollout against the benchmark's label); unanswered predictions are counted apart "
            "and left out of the cells. Precision, recall and F1 of the positive class; NaN "
            "where no prediction or label is positive."
        ],
    )


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
    save_figure(fig, figure)
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
            "(accuracy); rows per model reuse the pooled clustering. F1 CI: bootstrap over rows."
        ],
    )
    return df


# ---------------------------------------------------------------- Appendix D
def error_analysis(scores, rollouts: dict, top_n, boot, out: dict, gamma: int):
    summaries, long, flagged_all = [], [], []
    pair_summaries, pair_rows = [], []
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
        agreement, rows = divergence.pair_agreement(
            divergence.rollout_pairs(paths_by_patient(ro)),
            divergence.label_pairs(modal, labels),
            gamma,
        )
        pair_summaries.append({"model": model, **agreement})
        pair_rows += [{"model": model, **r} for r in rows]
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
    pairs = pd.DataFrame(
        pair_rows, columns=["model", "pair", "rollout_count", "label_count", "kept"]
    )
    write_table(pairs, out["pairs"])
    write_table(
        pd.DataFrame(pair_summaries),
        out["pair_agreement"],
        out["pair_agreement_md"],
        title="Figure 6: divergence pairs of rollouts vs divergence pairs from the expert label",
        notes=[
            "A divergence pair: two next nodes where paths part (START: at the first node; "
            "<node>-end: a path stops there). Rollout pairs: where a model's k rollouts of a "
            "patient part; label pairs: where its modal path leaves the expert label. Over the "
            f"pairs seen more than gamma={gamma} times in either: Pearson, Spearman, and R² of "
            "rollout counts predicting label counts."
        ],
    )
    _plot_divergence_pairs(pairs, out["pair_figure"])


def _plot_divergence_pairs(pairs: pd.DataFrame, figure, top: int = 5):
    """Per model, the top pairs of each source as shares of that source's pairs (Figure 6)."""
    models = list(dict.fromkeys(pairs["model"])) if len(pairs) else []
    fig, axes = plt.subplots(
        max(len(models), 1), 1, figsize=(9, 3.2 * max(len(models), 1)), squeeze=False
    )
    for ax, model in zip(axes[:, 0], models, strict=False):
        part = pairs[(pairs["model"] == model) & pairs["kept"].astype(bool)]
        chosen = list(
            dict.fromkeys(
                part.nlargest(top, "rollout_count")["pair"].tolist()
                + part.nlargest(top, "label_count")["pair"].tolist()
            )
        )
        part = part.set_index("pair").loc[chosen] if chosen else part.set_index("pair")
        x = np.arange(len(part))
        for shift, col, name in (
            (-0.2, "rollout_count", "rollouts"),
            (0.2, "label_count", "label"),
        ):
            total = pairs.loc[pairs["model"] == model, col].sum()
            shares = part[col] / total if total else 0 * x
            bars = ax.bar(x + shift, shares, 0.4, label=name)
            label_bars(ax, bars, shares, part[col], fontsize=5)
        ax.set_xticks(x, part.index, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("share of pairs")
        ax.set_title(model, fontsize=9)
        note_empty(ax, int(part[["rollout_count", "label_count"]].to_numpy().sum()), None, "pairs")
        legend_outside(ax)
    if not models:
        note_empty(axes[0, 0], 0, None, "labelled notes")
    fig.tight_layout()
    save_figure(fig, figure)
    plt.close(fig)


def _tuple(value):
    if not value or (isinstance(value, float) and np.isnan(value)):
        return None
    return tuple(p.strip() for p in str(value).split("->"))


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


# ---------------------------------------------------------------- the aggregate stage
def aggregate(
    notes_path, score_paths: dict, rollout_paths: dict, proxy_paths: list, block, boot, out
):
    """Every table and figure of the study, in dependency order (workflow.OUTPUTS_AGGREGATE
    names the outputs in ``out``; ``out["roc"]``: one figure per feature set).

    ``score_paths`` and ``rollout_paths``: model -> file; ``block``: the filled study block.
    """
    scores = load_scores(score_paths)
    rollouts = {m: read_rollouts(p) for m, p in rollout_paths.items()}
    cons = block["consistency"]
    cross_model(
        scores,
        rollouts,
        pool=cons["pool"],
        min_agree=int(cons["min_agree"]),
        delta=float(cons["delta"]),
        boot=boot,
        out={
            "labels": out["cross_labels"],
            "features": out["cross_features"],
            "scores": out["cross_scores"],
        },
    )
    table1_expert(scores, rollouts, boot, out["table1_expert"], out["table1_expert_md"])
    annotator_table(read_jsonl(notes_path), rollouts, out["annotators"], out["annotators_md"])
    consistency_accuracy(
        scores,
        boot,
        int(block["accuracy_bins"]),
        out["consistency_accuracy"],
        out["consistency_accuracy_md"],
        out["accuracy_by_consistency"],
        out["accuracy_by_consistency_md"],
        out["accuracy_by_consistency_figure"],
    )
    proxy_agreement(
        list(proxy_paths),
        out["cross_scores"],
        out["table1_expert"],
        boot,
        {
            "scores": out["proxy_scores"],
            "scores_md": out["proxy_scores_md"],
            "agreement": out["proxy_agreement"],
            "agreement_md": out["proxy_agreement_md"],
            "compliance": out["compliance"],
            "compliance_md": out["compliance_md"],
            "heatmap": out["proxy_heatmap"],
        },
    )
    sets = list(block["meta_classifier"]["feature_sets"])
    figures = dict(zip(sets, out["roc"], strict=True))
    figures["feature_sets"] = out["roc_feature_sets"]
    meta_classifier(
        scores,
        pd.read_csv(out["cross_features"], sep="\t", dtype={"patient_id": str}),
        pd.read_csv(out["proxy_scores"], sep="\t"),
        settings_from(block),
        sets,
        boot,
        {
            "table": out["meta_classifier"],
            "table_md": out["meta_classifier_md"],
            "predictions": out["meta_predictions"],
            "rows": out["meta_rows"],
        },
        figures,
    )
    clustering(
        pd.read_csv(out["meta_rows"], sep="\t", dtype={"patient_id": str}),
        int(block["meta_classifier"]["seed"]),
        boot,
        out["clustering"],
        out["clustering_md"],
    )
    error_analysis(
        scores,
        rollouts,
        int(block["error_top_n"]),
        boot,
        {
            "table": out["error_analysis"],
            "table_md": out["error_analysis_md"],
            "points": out["divergence_points"],
            "pairs": out["divergence_pairs"],
            "pair_agreement": out["divergence_agreement"],
            "pair_agreement_md": out["divergence_agreement_md"],
            "pair_figure": out["divergence_pairs_figure"],
        },
        gamma=int(block["error_gamma"]),
    )
