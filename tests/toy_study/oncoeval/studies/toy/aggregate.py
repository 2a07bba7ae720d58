"""toy_aggregate: accuracy per model with the workflow's interval over questions
(oncoeval.stats.compare.mean_ci: a share of independent questions, Wilson), and its figure."""

from __future__ import annotations

import pandas as pd

from ...plotting import note_empty, plt, save
from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import mean_ci

ACCURACY_COLUMNS = [
    "model", "n", "n_unscored", "accuracy", "accuracy_ci_low", "accuracy_ci_high"
]  # fmt: skip


def accuracy_table(scores: dict[str, pd.DataFrame], bootstrap: dict) -> pd.DataFrame:
    """Per model: questions scored, questions unscored, and the share answered right."""
    settings = BootstrapSettings(**bootstrap)
    rows = []
    for model, df in scores.items():
        correct = pd.to_numeric(df["correct"], errors="coerce").dropna()
        mean, low, high = mean_ci(correct.to_numpy(), settings, kind="binary")
        rows.append(
            {
                "model": model,
                "n": len(correct),
                "n_unscored": len(df) - len(correct),
                "accuracy": mean,
                "accuracy_ci_low": low,
                "accuracy_ci_high": high,
            }
        )
    return pd.DataFrame(rows, columns=ACCURACY_COLUMNS)


def accuracy_figure(table: pd.DataFrame, path) -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    if not note_empty(ax, int(table["n"].sum()), int(table["n_unscored"].sum()), "questions"):
        low = table["accuracy"] - table["accuracy_ci_low"]
        high = table["accuracy_ci_high"] - table["accuracy"]
        ax.bar(table["model"], table["accuracy"], yerr=[low.fillna(0), high.fillna(0)])
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (95% CI)")
    save(fig, path)
    plt.close(fig)


REFEREE_COLUMNS = ["model", "n", "n_same", "share_same"]


def referee_agreement_table(parsed: dict[str, pd.DataFrame], referee: pd.DataFrame):
    """Per model: questions both it and the referee answered with a number (``n``), and how
    many of those got the referee's number."""
    theirs = referee[referee["status"] == "ok"][["id", "answer"]]
    rows = []
    for model, df in parsed.items():
        both = df[df["status"] == "ok"].merge(theirs, on="id", suffixes=("", "_referee"))
        same = int((both["answer"] == both["answer_referee"]).sum())
        n = len(both)
        rows.append({"model": model, "n": n, "n_same": same, "share_same": same / n if n else None})
    return pd.DataFrame(rows, columns=REFEREE_COLUMNS)
