"""Figure 2: the proxy benchmarks' accuracy against the experts', and the guideline-compliance
cells per model and benchmark."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.io import as_written, write_table
from ...plotting import plt
from ...plotting import save as save_figure
from ...stats.compare import interval_note
from . import compliance, proxies


def proxy_agreement(proxy_paths: list, cross_scores, expert, boot, out: dict):
    """Every proxy's scores (the per-model files and the cross-model ``cross_scores``) against
    the experts' (Table 1, ``expert``), and the compliance table; returns the proxy scores as
    written."""
    frames = [pd.read_csv(p, sep="\t") for p in proxy_paths] + [cross_scores]
    scores = pd.concat(frames, ignore_index=True)
    scores["status"] = scores["status"].fillna("ok")
    write_table(
        scores,
        out["scores"],
        out["scores_md"],
        title="Proxy benchmarks: each model's accuracy on each proxy (95% CI)",
        notes=[
            "coverage: share of candidate notes the proxy keeps (labels it can give). "
            + interval_note(
                "note the proxy labels (the mean of its rollouts)",
                "patient (one note per patient in the study's data)",
                "n",
                boot,
            )
        ],
    )
    compliance_table(scores, expert, out["compliance"], out["compliance_md"])
    agree = proxies.agreement(scores, expert, boot)
    write_table(
        agree,
        out["agreement"],
        out["agreement_md"],
        title="Figure 2: proxy accuracy vs expert accuracy across models",
        notes=[
            "spearman: rank correlation across models; rmse: root mean squared difference of "
            "the accuracies; coverage: mean share of notes the proxy labels. Intervals "
            f"({boot.ci:.0%}): percentile bootstrap of the correlation over models (a statistic "
            "of the whole set; none (–) below 4 models). Unit: model; each unit its own cluster. "
            "n: n_models (models with both numbers)."
        ],
    )
    _plot_heatmap(agree, out["heatmap"])
    return as_written(scores)


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
            "and left out of the cells. Precision, recall and F1 of the positive class; none (–) "
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
