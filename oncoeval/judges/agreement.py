"""A judge against human labels: confusion matrix, per-class sensitivity / specificity, Cohen's κ.

Generic over the label set, so every judge with a validation set uses it (the Cancer-Myth
verifier on ``human_scores``, the side-effect matcher on its validation set, a chooser). Pairs
whose judge verdict could not be read are passed as ``None`` / NaN: they are counted per human
class and left out of every figure. Shares (agreement, per-class rates) get the comparison's
interval (oncoeval.stats.compare.mean_ci: Wilson over independent validation items; per-class rates
over the items of that human class); κ a percentile bootstrap over all pairs.

Validation items a review plan drew (oncoeval.review.plan: strata sampled at different rates)
come with design weights, 1 / inclusion probability (``weights``; a judge's pair passed as
oncoeval.judges.correction.Validation). Every figure is then Horvitz-Thompson weighted: the
confusion cells are summed weights (estimated numbers of the evaluated items, not of the
labels), sensitivity, specificity and agreement are ratios of those sums, κ is computed on the
weighted table (scikit-learn's ``sample_weight``); their intervals are a percentile bootstrap
that redraws the labels within groups of equal weight (the plan's strata) and counts them with
their weight (oncoeval.judges.correction._weighted_tables, as for Cancer-Myth's correction). A
label without an inclusion probability (NaN weight: a hand-filled row) weighs 1; the tables'
``weights`` column says which weighting each judge got.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from ..stats.bootstrap import BootstrapSettings
from ..stats.compare import interval_note, mean_ci


def _readable_weighted(truth, judged, weights):
    """(truth, verdicts, weights) of the readable pairs as arrays; weights None when unweighted,
    else each label's design weight (1 where it has no inclusion probability)."""
    truth, judged, keep = _readable(truth, judged)
    t = np.array([x for x, k in zip(truth, keep, strict=True) if k], dtype=object)
    j = np.array([x for x, k in zip(judged, keep, strict=True) if k], dtype=object)
    if weights is None:
        return t, j, None
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(truth),) or np.any(w[~np.isnan(w)] < 1):
        raise ValueError("design weights must be one number >= 1 (or NaN) per validation item")
    return t, j, np.nan_to_num(w[np.asarray(keep, dtype=bool)], nan=1.0)


def weighting(weights) -> str:
    """What the tables' ``weights`` column says: equal, or the design weights and how many
    labels had none."""
    if weights is None:
        return "equal"
    w = np.asarray(weights, dtype=float)
    none = int(np.isnan(w).sum())
    text = f"1/inclusion_probability ({w.size - none} labels"
    return text + (f"; {none} without one weigh 1)" if none else ")")


def _table_stats(tables: np.ndarray, n_classes: int) -> dict:
    """Per-class sensitivity / specificity, agreement and κ of (design-weighted) confusion
    tables (..., k, k), rows human, columns judge; NaN where a ratio is undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        total = tables.sum(axis=(-2, -1))
        rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
        diag = np.diagonal(tables, axis1=-2, axis2=-1)
        agreement = diag.sum(axis=-1) / total
        chance = (rows * cols).sum(axis=-1) / total**2
        kappa = np.where(chance < 1, (agreement - chance) / (1 - chance), np.nan)
        out = {"exact_agreement": agreement, "cohen_kappa": kappa}
        for c in range(n_classes):
            out[("sensitivity", c)] = diag[..., c] / rows[..., c]
            negatives = total - rows[..., c] - cols[..., c] + diag[..., c]
            out[("specificity", c)] = negatives / (total - rows[..., c])
    return out


def weighted_estimates(truth, judged, classes, weights, settings: BootstrapSettings) -> dict:
    """Design-weighted figures of the readable pairs as {name: (value, ci_low, ci_high)}:
    ``exact_agreement``, ``cohen_kappa``, (``sensitivity`` | ``specificity``, class index)."""
    from .correction import _indices, _percentiles, _weighted_tables, weighted_counts

    t, j, w = _readable_weighted(truth, judged, weights)
    k = len(classes)
    table = weighted_counts(t, j, classes, w)
    point = _table_stats(table, k)
    if t.size:
        point["cohen_kappa"] = float(
            cohen_kappa_score(list(t), list(j), labels=list(classes), sample_weight=w)
        )
    rng = np.random.default_rng(settings.seed)
    items = (_indices(t, classes), _indices(j, classes), w)
    boot = _table_stats(_weighted_tables(rng, items, k, settings.n_resamples, strata=w), k)
    return {
        name: (float(point[name]), *_percentiles(np.asarray(boot[name], dtype=float), settings))
        for name in point
    }


def _readable(truth, judged):
    truth = list(truth)
    judged = list(judged)
    if len(truth) != len(judged):
        raise ValueError(f"{len(truth)} human labels but {len(judged)} judge verdicts")
    keep = [not _missing(j) for j in judged]
    return truth, judged, keep


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def confusion_table(truth, judged, classes, truth_name="human", judge_name="judge", weights=None):
    """Rows: human class; columns: judge class, plus the unreadable verdicts per human class.

    With ``weights`` the judge columns are summed design weights (estimated evaluated items)
    and ``n_labels`` counts the readable labels of the row."""
    t, j, w = _readable_weighted(truth, judged, weights)
    truth, _, keep = _readable(truth, judged)
    labels = list(classes)
    if w is not None:
        from .correction import weighted_counts

        counts = weighted_counts(t, j, labels, w)
    elif t.size:
        counts = confusion_matrix(list(t), list(j), labels=labels)
    else:
        counts = np.zeros((len(labels),) * 2, dtype=int)
    table = pd.DataFrame(counts, columns=[f"{judge_name}_{c}" for c in labels])
    table.insert(0, truth_name, labels)
    if w is not None:
        table["n_labels"] = [int((t == c).sum()) for c in labels]
    table[f"{judge_name}_unscored"] = [
        sum(1 for x, k in zip(truth, keep, strict=True) if not k and x == c) for c in labels
    ]
    return table


def per_class_table(
    truth, judged, classes, settings: BootstrapSettings, weights=None
) -> pd.DataFrame:
    """Sensitivity and specificity of the judge for each class (one class vs the rest);
    design-weighted with ``weights`` (n_class, n_other stay label counts)."""
    t, j, _ = _readable_weighted(truth, judged, weights)
    weighted = None
    if weights is not None:
        weighted = weighted_estimates(truth, judged, classes, weights, settings)
    rows = []
    for index, c in enumerate(classes):
        is_c = t == c
        if weighted is None:
            sens = mean_ci((j[is_c] == c).astype(float), settings, kind="binary")
            spec = mean_ci((j[~is_c] != c).astype(float), settings, kind="binary")
        else:
            sens = weighted[("sensitivity", index)]
            spec = weighted[("specificity", index)]
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


def validation_summary(
    truth, judged, classes, settings: BootstrapSettings, judge_id="", weights=None
) -> dict:
    """n, n_unscored, exact agreement and Cohen's κ with their intervals, as one table row;
    design-weighted with ``weights`` (n stays the number of labels)."""
    truth, judged, keep = _readable(truth, judged)
    pairs = [(t, j) for t, j, k in zip(truth, judged, keep, strict=True) if k]
    if weights is None:
        exact = mean_ci([float(t == j) for t, j in pairs], settings, kind="binary")
        kappa = kappa_with_ci(truth, judged, classes, settings)
    else:
        weighted = weighted_estimates(truth, judged, classes, weights, settings)
        exact, kappa = weighted["exact_agreement"], weighted["cohen_kappa"]
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
    from ..core.io import write_table

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
    any_weighted = False
    for judge_id, pair in judges.items():
        truth, judged = (list(x) for x in pair)
        w = getattr(pair, "weights", None)
        any_weighted |= w is not None
        how = {"weights": weighting(w)}
        row = validation_summary(truth, judged, classes, settings, judge_id, w)
        summary.append({**row, **how})
        confusion.append(
            confusion_table(truth, judged, classes, weights=w).assign(judge=judge_id, **how)
        )
        per_class.append(
            per_class_table(truth, judged, classes, settings, w).assign(judge=judge_id, **how)
        )
    if any_weighted:
        note += (
            " Where weights is 1/inclusion_probability, every figure weighs a label by 1 / its "
            "inclusion probability in the review plan (a label without one weighs 1), and its "
            "interval is a percentile bootstrap redrawing the labels within groups of equal "
            f"weight ({settings.n_resamples} resamples, seed {settings.seed})."
        )
    write_table(
        pd.DataFrame(summary), *out["summary"], f"{title}: agreement with human labels", [note]
    )
    write_table(
        _judge_first(confusion),
        *out["confusion"],
        f"{title}: confusion matrix",
        [
            "Rows: human label; columns: judge verdict (judge_unscored: unreadable labels)."
            + (
                " A judge with design weights: the judge columns are summed weights (the "
                "evaluated items estimated in each cell), n_labels the readable labels."
                if any_weighted
                else ""
            )
        ],
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
