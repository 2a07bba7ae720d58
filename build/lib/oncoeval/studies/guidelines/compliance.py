"""Guideline-compliance detection: is NOT_GUIDELINE_COMPLIANT predicted when the label says so?

Positive = NOT_GUIDELINE_COMPLIANT (the study's convention). Each (prediction, label) pair is a
true positive, false negative, false positive or true negative; a prediction that could not be
parsed (or a failed call) is counted as ``unanswered`` and left out of the four cells, so it
neither helps nor hides a miss. Accuracy, precision, recall and F1 follow from the cells.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from .tree import NOT_COMPLIANT

CELLS = ("tp", "fn", "fp", "tn", "unanswered")


def is_non_compliant(path) -> bool:
    return bool(path) and tuple(path) == (NOT_COMPLIANT,)


def empty_counts() -> dict[str, int]:
    return dict.fromkeys(CELLS, 0)


def add_pair(counts: dict, pred, label) -> None:
    """Count one prediction against a (non-empty) label."""
    if not label:
        return
    if not pred:
        counts["unanswered"] += 1
        return
    truth, guess = is_non_compliant(label), is_non_compliant(pred)
    cell = ("tp" if guess else "fn") if truth else ("fp" if guess else "tn")
    counts[cell] += 1


def count_pairs(pairs: Iterable) -> dict[str, int]:
    counts = empty_counts()
    for pred, label in pairs:
        add_pair(counts, pred, label)
    return counts


def metrics(counts: dict) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of the positive class from the four cells (NaN where
    a ratio has no denominator)."""
    tp, fn, fp, tn = (int(counts.get(c, 0)) for c in ("tp", "fn", "fp", "tn"))
    y_true = np.array([1] * (tp + fn) + [0] * (fp + tn))
    y_pred = np.array([1] * tp + [0] * fn + [1] * fp + [0] * tn)
    if not len(y_true):
        return dict.fromkeys(("accuracy", "precision", "recall", "f1"), float("nan"))
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=[1], average=None, zero_division=np.nan
    )
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "precision": float(precision[0]),
        "recall": float(recall[0]),
        "f1": float(f1[0]),
    }
