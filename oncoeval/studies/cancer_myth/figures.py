"""Figures of the three views: overall PCS/PCR, PCS by category, PCS by generator x responder."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...plotting import label_bars, legend_outside, note_empty, plt, save


def _errors(df: pd.DataFrame, metric: str) -> np.ndarray:
    low = (df[metric] - df[f"{metric}_ci_low"]).clip(lower=0).fillna(0)
    high = (df[f"{metric}_ci_high"] - df[metric]).clip(lower=0).fillna(0)
    return np.vstack([low.to_numpy(), high.to_numpy()])


def overall_figure(table: pd.DataFrame, path, interval: str = "the table's 95% CI") -> None:
    """PCS and PCR per model with the intervals of the table (``interval`` names their method,
    as the title says it)."""
    fig, axes = plt.subplots(1, 2, figsize=(max(6, 1.2 * len(table) + 4), 3.6))
    n_scored = int(table["n"].sum()) if len(table) else 0
    n_unscored = int(table["n_unscored"].sum()) if len(table) else 0
    for ax, metric, label in ((axes[0], "pcs", "PCS (-1 to 1)"), (axes[1], "pcr", "PCR")):
        if not note_empty(ax, n_scored, n_unscored, "answers"):
            names = [
                f"{m}\nn={n}, unscored={u}"
                for m, n, u in zip(table["model"], table["n"], table["n_unscored"], strict=True)
            ]
            bars = ax.bar(names, table[metric], yerr=_errors(table, metric), capsize=4)
            label_bars(ax, bars, table[metric], table["n"])
        ax.set_ylabel(label)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.tick_params(axis="x", rotation=30)
    axes[0].set_ylim(-1, 1)
    axes[1].set_ylim(0, 1)
    fig.suptitle(f"Presupposition correction ({interval})", fontsize=10)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def category_figure(table: pd.DataFrame, path) -> None:
    categories = list(dict.fromkeys(table["category"])) if len(table) else []
    models = list(dict.fromkeys(table["model"])) if len(table) else []
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(categories) + 2), 4))
    width = 0.8 / max(1, len(models))
    x = np.arange(len(categories))
    for k, model in enumerate(models):
        part = table[table["model"] == model].set_index("category").reindex(categories)
        bars = ax.bar(
            x + k * width - 0.4 + width / 2,
            part["pcs"],
            width,
            yerr=_errors(part, "pcs"),
            capsize=3,
            label=model,
        )
        label_bars(ax, bars, part["pcs"], part["n"] if "n" in part else None, fontsize=6)
    ax.set_xticks(x, categories, rotation=25, ha="right")
    ax.set_ylim(-1, 1)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel("PCS")
    ax.set_title("Category-wise PCS")
    scored = table["n"].sum() if len(table) and "n" in table else 0
    unscored = table["n_unscored"].sum() if len(table) and "n_unscored" in table else 0
    note_empty(ax, int(scored), int(unscored), "answers")
    legend_outside(ax)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)


def generator_figure(table: pd.DataFrame, path) -> None:
    if len(table):
        matrix = table.pivot(index="generator", columns="responder", values="pcs")
    else:
        matrix = pd.DataFrame()
    fig, ax = plt.subplots(
        figsize=(max(4, 1.4 * matrix.shape[1] + 2), max(3, 0.8 * len(matrix) + 1.5))
    )
    if matrix.size:
        image = ax.imshow(matrix.to_numpy(dtype=float), cmap="RdYlGn", vmin=-1, vmax=1)
        ax.set_xticks(range(matrix.shape[1]), matrix.columns, rotation=30, ha="right")
        ax.set_yticks(range(len(matrix)), matrix.index)
        for i in range(len(matrix)):
            for j in range(matrix.shape[1]):
                value = matrix.iat[i, j]
                label = f"{value:.2f}" if pd.notna(value) else "unscored"
                ax.text(j, i, label, ha="center", va="center", fontsize=9)
        fig.colorbar(image, ax=ax, label="PCS")
    else:
        ax.text(0.5, 0.5, "no generator-tagged questions", ha="center", va="center")
        ax.set_axis_off()
    ax.set_xlabel("responder")
    ax.set_ylabel("generator")
    ax.set_title("PCS by generator x responder")
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
