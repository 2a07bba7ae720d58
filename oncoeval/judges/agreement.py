"""A judge against human labels: confusion matrix, per-class sensitivity / specificity, Cohen's κ.

Generic over the label set, so every judge with a validation set uses it (the Cancer-Myth
verifier on ``human_scores``, the side-effect matcher on its validation set, a chooser). Pairs
whose judge verdict could not be read are passed as ``None`` / NaN: they are counted per human
class and left out of every figure. Shares (agreement, per-class rates) get the comparison's
interval (oncoeval.compare.mean_ci: Wilson over independent validation items; per-class rates
over the items of that human class); κ a percentile bootstrap over all pairs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from ..compare import interval_note, mean_ci
from ..stats import BootstrapSettings


def _readable(truth, judged):
    truth = list(truth)
    judged = list(judged)
    if len(truth) != len(judged):
        raise ValueError(f"{len(truth)} human labels but {len(judged)} judge verdicts")
    keep = [not _missing(j) for j in judged]
    return truth, judged, keep


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def confusion_table(truth, judged, classes, truth_name="human", judge_name="judge"):
    """Rows: human class; columns: judge class, plus the unreadable verdicts per human class."""
    truth, judged, keep = _readable(truth, judged)
    t = [x for x, k in zip(truth, keep, strict=True) if k]
    j = [x for x, k in zip(judged, keep, strict=True) if k]
    labels = list(classes)
    counts = confusion_matrix(t, j, labels=labels) if t else np.zeros((len(labels),) * 2, dtype=int)
    table = pd.DataFrame(counts, columns=[f"{judge_name}_{c}" for c in labels])
    table.insert(0, truth_name, labels)
    table[f"{judge_name}_unscored"] = [
        sum(1 for x, k in zip(truth, keep, strict=True) if not k and x == c) for c in labels
    ]
    return table


def per_class_table(truth, judged, classes, settings: BootstrapSettings) -> pd.DataFrame:
    """Sensitivity and specificity of the judge for each class (one class vs the rest)."""
    truth, judged, keep = _readable(truth, judged)
    t = np.array([x for x, k in zip(truth, keep, strict=True) if k], dtype=object)
    j = np.array([x for x, k in zip(judged, keep, strict=True) if k], dtype=object)
    rows = []
    for c in classes:
        is_c = t == c
        sens = mean_ci((j[is_c] == c).astype(float), settings, kind="binary")
        spec = mean_ci((j[~is_c] != c).astype(float), settings, kind="binary")
        rows.append(
            {
                "class": c,
                "n_class": int(is_c.sum()),
                "n_other": int((~is_c).sum()),
                "sensitivity": sens[0],
                "sensitivity_ci_low": sens[1],
                "sensitivity_ci_high": sens[2],
                "specificity": spec[0],
                "specificity_ci_low": spec[1],
                "specificity_ci_high": spec[2],
            }
        )
    return pd.DataFrame(rows)


def kappa_with_ci(truth, judged, classes, settings: BootstrapSettings):
    """(Cohen's κ, ci_low, ci_high) over readable pairs; NaN where κ is undefined.

    A resample in which κ is undefined (one class only on both sides) is left out.
    """
    truth, judged, keep = _readable(truth, judged)
    t = np.array([x for x, k in zip(truth, keep, strict=True) if k], dtype=object)
    j = np.array([x for x, k in zip(judged, keep, strict=True) if k], dtype=object)
    labels = list(classes)

    def kappa(a, b) -> float:
        if len(a) == 0 or len(set(a) | set(b)) < 2:
            return float("nan")
        return float(cohen_kappa_score(a, b, labels=labels))

    value = kappa(list(t), list(j))
    if np.isnan(value) or len(t) < 2:
        return value, float("nan"), float("nan")
    rng = np.random.default_rng(settings.seed)
    draws = rng.integers(0, len(t), size=(settings.n_resamples, len(t)))
    boot = np.array([kappa(list(t[d]), list(j[d])) for d in draws])
    boot = boot[~np.isnan(boot)]
    alpha = (1 - settings.ci) / 2
    low, high = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
    return value, float(low), float(high)


def validation_summary(truth, judged, classes, settings: BootstrapSettings, judge_id="") -> dict:
    """n, n_unscored, exact agreement and Cohen's κ with their intervals, as one table row."""
    truth, judged, keep = _readable(truth, judged)
    pairs = [(t, j) for t, j, k in zip(truth, judged, keep, strict=True) if k]
    exact = mean_ci([float(t == j) for t, j in pairs], settings, kind="binary")
    kappa = kappa_with_ci(truth, judged, classes, settings)
    return {
        "judge": judge_id,
        "n": len(pairs),
        "n_unscored": len(truth) - len(pairs),
        "exact_agreement": exact[0],
        "exact_agreement_ci_low": exact[1],
        "exact_agreement_ci_high": exact[2],
        "cohen_kappa": kappa[0],
        "cohen_kappa_ci_low": kappa[1],
        "cohen_kappa_ci_high": kappa[2],
    }


def write_validation_tables(
    truth, judged, classes, settings: BootstrapSettings, judge_id: str, out: dict, title: str
) -> None:
    """Summary, confusion matrix and per-class table of one judge, each as TSV + Markdown.

    ``out`` maps ``summary``, ``confusion``, ``per_class`` to (tsv, md) path pairs; the hook a
    study's judge-validation rule calls (the side-effect matcher's validation set, a chooser).
    """
    write_judges_tables({judge_id: (truth, judged)}, classes, settings, out, title)


def write_judges_tables(
    judges: dict, classes, settings: BootstrapSettings, out: dict, title: str
) -> None:
    """:func:`write_validation_tables` for several judges on one validation set.

    ``judges`` maps a judge id to its (human labels, judge verdicts); each table gets a ``judge``
    column and one block of rows per judge, in the given order.
    """
    from ..io import write_table

    n_labels = {len(list(truth)) for truth, _ in judges.values()}
    note = (
        f"Judge{'s' if len(judges) > 1 else ''} {', '.join(judges)} against "
        f"{'/'.join(map(str, sorted(n_labels)))} human labels; unreadable verdicts are "
        "counted in n_unscored and left out. "
        + interval_note(
            "validation item (a human label and the judge's verdict)",
            "validation item",
            "n (per class: n_class, n_other)",
            settings,
        )
        + f" Cohen's κ: percentile bootstrap over items ({settings.n_resamples} resamples, "
        f"seed {settings.seed})."
    )
    summary, confusion, per_class = [], [], []
    for judge_id, (truth, judged) in judges.items():
        truth, judged = list(truth), list(judged)
        summary.append(validation_summary(truth, judged, classes, settings, judge_id))
        confusion.append(confusion_table(truth, judged, classes).assign(judge=judge_id))
        per_class.append(per_class_table(truth, judged, classes, settings).assign(judge=judge_id))
    write_table(
        pd.DataFrame(summary), *out["summary"], f"{title}: agreement with human labels", [note]
    )
    write_table(
        _judge_first(confusion),
        *out["confusion"],
        f"{title}: confusion matrix",
        ["Rows: human label; columns: judge verdict (judge_unscored: unreadable)."],
    )
    write_table(
        _judge_first(per_class),
        *out["per_class"],
        f"{title}: sensitivity and specificity per class",
        [note, "Each class against the rest."],
    )


def _judge_first(frames: list[pd.DataFrame]) -> pd.DataFrame:
    table = pd.concat(frames, ignore_index=True)
    return table[["judge"] + [c for c in table.columns if c != "judge"]]
