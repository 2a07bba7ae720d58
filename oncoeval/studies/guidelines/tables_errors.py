"""Error analysis: where traces leave the expert path, and the divergence-point pairs of
Figure 6."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.io import write_table
from ...plotting import label_bars, legend_outside, note_empty, plt
from ...plotting import save as save_figure
from ...stats.compare import interval_note
from . import divergence
from .parse import paths_by_patient
from .score import labelled, path_tuple


def error_analysis(scores, rollouts: dict, top_n, boot, out: dict, gamma: int):
    summaries, long, flagged_all = [], [], []
    pair_summaries, pair_rows = [], []
    lab = labelled(scores)
    for model, ro in rollouts.items():
        ro = ro[ro["note_set"] == "labelled"]
        group = lab[lab["model"] == model]
        modal = {r.patient_id: path_tuple(r.modal_path) for r in group.itertuples()}
        labels = {r.patient_id: path_tuple(r.label) for r in group.itertuples()}
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
            "where the model's own rollouts most often leave its modal path (no label needed). "
            + interval_note(
                "label error (one per patient and model)",
                "patient (the all-models row: one patient's errors by every model together)",
                "n_label_errors",
                boot,
            )
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
