"""The exposure figure: per probe and model, each item's score beside its control's, and the
controls' 95th percentile that an item must beat to be flagged."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plotting import plt, save


def exposure_figure(per_model: dict[str, pd.DataFrame], table: pd.DataFrame, path) -> None:
    probes = [p for p in table["probe"].unique() if (table[table["probe"] == p]["n"] > 0).any()]
    models = list(per_model)
    fig, axes = plt.subplots(
        1, max(1, len(probes)), figsize=(max(4, 1.6 * len(models) + 2) * max(1, len(probes)), 3.8)
    )
    axes = np.atleast_1d(axes)
    rng = np.random.default_rng(0)  # the jitter only
    if not probes:
        axes[0].text(0.5, 0.5, "no item answered with its control", ha="center", va="center")
    for ax, probe in zip(axes, probes, strict=False):
        for x, model in enumerate(models):
            rows = per_model[model]
            rows = rows[rows["probe"] == probe]
            for offset, column, colour in ((-0.18, "control_score", "grey"), (0.18, "score", "C0")):
                y = rows[column].dropna().to_numpy(float)
                ax.scatter(x + offset + rng.uniform(-0.08, 0.08, len(y)), y, s=12, c=colour)
            row = table[(table["model"] == model) & (table["probe"] == probe)].iloc[0]
            if not np.isnan(row["control_p95"]):
                ax.hlines(row["control_p95"], x - 0.35, x + 0.35, colors="black")
        labels = []
        for model in models:
            row = table[(table["model"] == model) & (table["probe"] == probe)].iloc[0]
            labels.append(f"{model}\n{row['flagged']}/{row['n']} {row['verdict']}")
        ax.set_xticks(range(len(models)), labels, fontsize=8)
        if probe == "likelihood":  # Min-K% Prob: a mean log-probability, not a 0-1 score
            ax.set_ylabel("Min-20% token log-probability")
        else:
            ax.set_ylim(-0.05, 1.05)
            ax.set_ylabel("ROUGE-L" if probe == "completion" else "exact match")
        ax.set_title(probe)
    fig.tight_layout()
    save(fig, path)
