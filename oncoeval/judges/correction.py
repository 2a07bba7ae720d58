"""Judged rates corrected for the judge's own errors, measured on human-labelled validation items.

A judge (an LLM verifier or matcher) labels every evaluated item; on a validation set the same
judge is compared with human labels. With ``M[i, j] = P(judge says j | truth i)`` estimated from
the validation set and ``q`` the share of evaluated items the judge put in each class, the
observed shares satisfy ``q = M^T pi`` for the true shares ``pi``:

* binary rate (PCR: share of score 1): Rogan & Gladen (1978),
  ``pi = (q + specificity - 1) / (sensitivity + specificity - 1)``, clipped to [0, 1];
* a distribution over several classes (the -1/0/1 scores behind PCS): ``pi`` solving
  ``M^T pi = q``, constrained to valid proportions (non-negative, summing to one) by
  non-negative least squares when the exact solution leaves the simplex.

Confidence intervals resample both the evaluated items and the validation items (each with
replacement, independently; percentile method), so the judge's measurement error widens them.
A resample in which the correction is undefined (a class absent, sensitivity + specificity <= 1,
a singular matrix) is left out of the percentiles.

Validation items drawn by a review plan (oncoeval.review.plan: stratified by the judge's verdict,
strata sampled at different rates) carry design weights (1 / inclusion probability). The
confusion matrix is then estimated from weighted counts, so it describes the evaluated items and
not the sample's mix; with the evaluated items' verdict shares as ``q`` the corrected shares are
the stratified estimator ``sum_j q_j P(truth | judge says j)``. Their bootstrap redraws the
validation items within their stratum (same verdict, same weight).

A correction the validation set cannot support is not computed: fewer validation labels of a
class than ``min_labels_per_class``, sensitivity + specificity <= 1, or a singular matrix; the
reason is returned in place of the number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from ..core.schema import top_level_defaults
from ..stats.bootstrap import BootstrapSettings

# The schema's `judge_correction` defaults, written once there.
_DEFAULTS = top_level_defaults("judge_correction")


@dataclass(frozen=True)
class CorrectionSettings:
    min_labels_per_class: int = _DEFAULTS["min_labels_per_class"]

    @classmethod
    def from_config(cls, config: dict) -> CorrectionSettings:
        """The config's `judge_correction` block (filled by the workflow; filled here when
        partial)."""
        block = {**_DEFAULTS, **((config or {}).get("judge_correction") or {})}
        return cls(min_labels_per_class=int(block["min_labels_per_class"]))


class Validation(tuple):
    """(human labels, judge verdicts) of the validation items, unpacked as a pair, with
    ``weights``: each item's design weight (1 / inclusion probability) when a review plan drew
    them, None when they are weighted alike."""

    def __new__(cls, truth, judged, weights=None):
        pair = super().__new__(cls, (truth, judged))
        pair.weights = weights
        return pair


@dataclass(frozen=True)
class Corrected:
    """A corrected estimate with its CI, or the reason it could not be computed."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str = ""

    @property
    def cell(self):
        """What a table shows: the number, or the reason in its place."""
        return self.reason if self.reason else self.value


DEFAULT_BOOTSTRAP = BootstrapSettings()
DEFAULT_CORRECTION = CorrectionSettings()


# --- point estimates ---------------------------------------------------------------------------


def rogan_gladen(observed: float, sensitivity: float, specificity: float) -> float:
    """True prevalence from an observed positive share; clipped to [0, 1]."""
    youden = sensitivity + specificity - 1
    if youden <= 0:
        raise ValueError("sensitivity + specificity must exceed 1")
    return float(np.clip((observed + specificity - 1) / youden, 0.0, 1.0))


def invert_confusion(observed, confusion) -> np.ndarray:
    """True class shares ``pi`` with ``confusion.T @ pi`` closest to ``observed``, pi on the simplex.

    ``confusion`` is row-stochastic: row i holds P(judge says j | truth i).
    """
    q = np.asarray(observed, dtype=float)
    m = np.asarray(confusion, dtype=float)
    try:
        pi = np.linalg.solve(m.T, q)
    except np.linalg.LinAlgError:
        pi = None
    if pi is not None and np.all(pi >= -1e-12):
        return _to_simplex(pi)
    return _nnls_simplex(m.T, q)


def _to_simplex(pi: np.ndarray) -> np.ndarray:
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def _nnls_simplex(a: np.ndarray, q: np.ndarray, weight: float = 1e3) -> np.ndarray:
    # Least squares with pi >= 0; the sum-to-one constraint enters as a heavily weighted row.
    a_aug = np.vstack([a, weight * np.ones(a.shape[1])])
    q_aug = np.concatenate([q, [weight]])
    pi, _ = nnls(a_aug, q_aug)
    return _to_simplex(pi)


# --- validation set -> error rates -------------------------------------------------------------


def confusion_counts(truth, judged, classes) -> np.ndarray:
    """Counts[i, j]: validation items of true class i the judge put in class j."""
    index = {c: k for k, c in enumerate(classes)}
    counts = np.zeros((len(classes), len(classes)), dtype=int)
    for t, j in zip(truth, judged, strict=True):
        counts[index[t], index[j]] += 1
    return counts


def weighted_counts(truth, judged, classes, weights) -> np.ndarray:
    """Design-weighted counts[i, j]: the summed weights of validation items of true class i the
    judge put in class j (an estimate of how many evaluated items fall in that cell)."""
    index = {c: k for k, c in enumerate(classes)}
    table = np.zeros((len(classes), len(classes)))
    for t, j, w in zip(truth, judged, weights, strict=True):
        table[index[t], index[j]] += float(w)
    return table


def _row_stochastic(counts: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / counts.sum(axis=-1, keepdims=True)


def support_problem(counts: np.ndarray, classes, min_labels: int, table=None) -> str:
    """Why this validation table cannot support a correction ('' when it can).

    ``counts``: labels per cell (the minimum is on them); ``table``: the cells the rates come
    from, when they are design-weighted."""
    per_class = counts.sum(axis=1)
    if per_class.sum() == 0:
        return "no validation labels"
    short = [f"{c}: {int(n)}" for c, n in zip(classes, per_class, strict=True) if n < min_labels]
    if short:
        return f"fewer than {min_labels} validation labels per class ({', '.join(short)})"
    m = _row_stochastic(counts if table is None else table)
    if len(classes) == 2:
        sensitivity, specificity = m[1, 1], m[0, 0]
        if sensitivity + specificity <= 1:
            return (
                f"sensitivity + specificity <= 1 ({sensitivity:.2f} + {specificity:.2f}): "
                "the judge is no better than chance"
            )
    elif np.linalg.matrix_rank(m) < len(classes):
        return "the judge's confusion matrix is singular: its verdicts do not separate the classes"
    return ""


# --- corrected rates with two-sample bootstrap CIs ---------------------------------------------


def _percentiles(values: np.ndarray, settings: BootstrapSettings):
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    alpha = (1 - settings.ci) / 2
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def _missing(cluster) -> bool:
    return cluster is None or cluster == "" or (isinstance(cluster, float) and np.isnan(cluster))


def _cluster_counts(class_index, clusters, k: int):
    """(clusters x classes) counts of the evaluated items' classes, or None without clusters
    (an item without a cluster id is its own)."""
    if clusters is None:
        return None
    ids = [f"unit:{i}" if _missing(c) else f"id:{c}" for i, c in enumerate(clusters)]
    _, codes = np.unique(np.asarray(ids), return_inverse=True)
    counts = np.zeros((codes.max() + 1 if len(codes) else 0, k))
    np.add.at(counts, (codes, np.asarray(class_index, dtype=int)), 1)
    return counts


def _weighted_tables(rng, weighted, k: int, n_resamples: int, strata=None) -> np.ndarray:
    """Design-weighted validation tables of a stratified bootstrap: ``weighted`` is (truth
    index, verdict index, weight) per item; items are redrawn within their stratum (``strata``,
    one key per item; default: the same verdict and weight) and counted with their weight."""
    truth, judged, weights = (np.asarray(a) for a in weighted)
    tables = np.zeros((n_resamples, k * k))
    keys = np.column_stack([judged, weights] if strata is None else [np.asarray(strata)])
    rows = np.arange(n_resamples)[:, None]
    for key in np.unique(keys, axis=0):
        members = np.flatnonzero((keys == key).all(axis=1))
        drawn = members[rng.integers(0, members.size, size=(n_resamples, members.size))]
        np.add.at(tables, (rows, truth[drawn] * k + judged[drawn]), weights[drawn])
    return tables.reshape(-1, k, k)


def _resample(
    observed_counts, validation_counts, settings: BootstrapSettings, by_cluster=None, weighted=None
):
    """Resampled class shares of the evaluated items and resampled validation tables.

    Resampling items with replacement is a multinomial draw over their classes (or, for the
    validation set, over the cells of its table), which is what is drawn here. With
    ``by_cluster`` (the class counts of each cluster of items) whole clusters are drawn instead;
    with ``weighted`` (design-weighted validation items) their tables are ``_weighted_tables``.
    """
    rng = np.random.default_rng(settings.seed)
    n_obs = int(observed_counts.sum())
    n_val = int(validation_counts.sum())
    k = validation_counts.shape[0]
    if by_cluster is None:
        q = rng.multinomial(n_obs, observed_counts / n_obs, size=settings.n_resamples) / n_obs
    else:
        draws = rng.integers(0, len(by_cluster), size=(settings.n_resamples, len(by_cluster)))
        drawn = by_cluster[draws].sum(axis=1)
        q = drawn / drawn.sum(axis=1, keepdims=True)
    if weighted is not None:
        return q, _weighted_tables(rng, weighted, k, settings.n_resamples)
    cells = rng.multinomial(
        n_val, validation_counts.ravel() / n_val, size=settings.n_resamples
    ).reshape(-1, k, k)
    return q, cells


def corrected_rate(
    judged_positive,
    validation_truth,
    validation_judged,
    settings: BootstrapSettings = DEFAULT_BOOTSTRAP,
    correction: CorrectionSettings = DEFAULT_CORRECTION,
    clusters=None,
    validation_weights=None,
) -> Corrected:
    """Rogan-Gladen corrected share of positives among the evaluated items.

    ``judged_positive``: the judge's binary verdict per evaluated item (bool / 0-1);
    ``validation_truth`` / ``validation_judged``: human label and judge verdict per validation item;
    ``clusters``: each evaluated item's cluster, resampled whole (None: items independent);
    ``validation_weights``: each validation item's design weight (None: unweighted).
    """
    judged = np.asarray(judged_positive, dtype=bool)
    if judged.size == 0:
        return Corrected(None, None, None, "no judged items")
    truth_b = np.asarray(validation_truth, dtype=bool)
    judged_b = np.asarray(validation_judged, dtype=bool)
    counts = confusion_counts(truth_b, judged_b, (False, True))
    table, weighted = _design(truth_b.astype(int), judged_b.astype(int), (0, 1), validation_weights)
    problem = support_problem(
        counts, ("negative", "positive"), correction.min_labels_per_class, table
    )
    if problem:
        return Corrected(None, None, None, problem)
    m = _row_stochastic(counts if table is None else table)
    value = rogan_gladen(judged.mean(), m[1, 1], m[0, 0])
    observed = np.array([np.sum(~judged), np.sum(judged)], dtype=float)
    by_cluster = _cluster_counts(judged.astype(int), clusters, 2)
    q, cells = _resample(observed, counts, settings, by_cluster, weighted)
    with np.errstate(invalid="ignore", divide="ignore"):
        mb = _row_stochastic(cells.astype(float))
        sens, spec = mb[:, 1, 1], mb[:, 0, 0]
        youden = sens + spec - 1
        boot = np.where(youden > 0, (q[:, 1] + spec - 1) / youden, np.nan)
    low, high = _percentiles(np.clip(boot, 0.0, 1.0), settings)
    return Corrected(value, low, high)


def _design(truth, judged, classes, weights):
    """(weighted table, (truth index, verdict index, weight) per item) of design-weighted
    validation items; (None, None) when they are unweighted."""
    if weights is None:
        return None, None
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(truth),) or not np.all(np.isfinite(w) & (w >= 1)):
        raise ValueError("design weights must be one number >= 1 per validation item")
    table = weighted_counts(truth, judged, classes, w)
    return table, (_indices(truth, classes), _indices(judged, classes), w)


def corrected_distribution(
    judged_classes,
    validation: Validation,
    classes,
    settings: BootstrapSettings = DEFAULT_BOOTSTRAP,
    correction: CorrectionSettings = DEFAULT_CORRECTION,
    functional=None,
    clusters=None,
) -> tuple[np.ndarray | None, Corrected]:
    """Corrected class shares of the evaluated items and a functional of them with its CI.

    ``functional`` maps a share vector to the number reported (default: identity is not a
    number, so it must be given, e.g. the mean score ``pi @ classes`` for PCS); ``clusters``:
    each evaluated item's cluster, resampled whole (None: items independent); ``validation``:
    the validation items' (human labels, judge verdicts), with their design ``weights`` (None
    or a plain pair: unweighted).
    Returns (corrected shares or None, Corrected for the functional).
    """
    validation_truth, validation_judged = validation
    validation_weights = getattr(validation, "weights", None)
    judged = list(judged_classes)
    if not judged:
        return None, Corrected(None, None, None, "no judged items")
    counts = confusion_counts(validation_truth, validation_judged, classes)
    table, weighted = _design(
        list(validation_truth), list(validation_judged), classes, validation_weights
    )
    problem = support_problem(counts, classes, correction.min_labels_per_class, table)
    if problem:
        return None, Corrected(None, None, None, problem)
    observed = confusion_counts(judged, judged, classes).diagonal().astype(float)
    pi = invert_confusion(
        observed / observed.sum(), _row_stochastic(counts if table is None else table)
    )
    index = {c: i for i, c in enumerate(classes)}
    by_cluster = _cluster_counts([index[x] for x in judged], clusters, len(classes))
    q, cells = _resample(observed, counts, settings, by_cluster, weighted)
    mb = _row_stochastic(cells.astype(float))
    boot = np.full(settings.n_resamples, np.nan)
    with np.errstate(invalid="ignore"):
        usable = ~np.isnan(mb).any(axis=(1, 2)) & (np.abs(np.linalg.det(np.nan_to_num(mb))) > 1e-9)
    shares = np.linalg.solve(np.swapaxes(mb[usable], 1, 2), q[usable][..., None])[..., 0]
    for row, b in zip(shares, np.flatnonzero(usable), strict=True):
        share = _to_simplex(row) if np.all(row >= -1e-12) else _nnls_simplex(mb[b].T, q[b])
        boot[b] = functional(share)
    low, high = _percentiles(boot, settings)
    return pi, Corrected(float(functional(pi)), low, high)


# --- two models' corrected rates compared -------------------------------------------------------


def _corrected_value(judged_index, counts, n_classes, functional) -> float:
    """The corrected rate of verdicts given as class indices (two classes: the Rogan-Gladen
    share of the second; more: ``functional`` of the corrected shares); NaN where ``counts``
    (the validation table) cannot correct."""
    if judged_index.size == 0:
        return float("nan")
    q = np.bincount(judged_index, minlength=n_classes) / judged_index.size
    m = _row_stochastic(counts.astype(float))
    if np.isnan(m).any():
        return float("nan")
    if n_classes == 2:
        if m[1, 1] + m[0, 0] - 1 <= 0:
            return float("nan")
        return rogan_gladen(q[1], m[1, 1], m[0, 0])
    if abs(np.linalg.det(m)) <= 1e-9:
        return float("nan")
    return float(functional(invert_confusion(q, m)))


def _indices(values, classes) -> np.ndarray:
    index = {c: k for k, c in enumerate(classes)}
    return np.array([index[v] for v in values], dtype=int)


def corrected_difference(
    judged_a,
    judged_b,
    clusters,
    validation: Validation,
    classes,
    functional,
    settings: BootstrapSettings = DEFAULT_BOOTSTRAP,
    correction: CorrectionSettings = DEFAULT_CORRECTION,
) -> dict:
    """Corrected(a) - corrected(b) on the items both models were judged on, both corrected with
    the same validation set, with a joint bootstrap: each draw resamples the items' clusters (the
    same draw for both models, so the comparison stays paired) and the validation items once,
    and corrects both models' resampled verdicts with that one resampled confusion matrix.

    Returns value_a, value_b, diff, diff_ci_low, diff_ci_high (percentile) and p_value (two-sided
    bootstrap p: twice the smaller share of draws on either side of zero), or ``reason`` alone
    where the validation set cannot support the correction. For two classes the value is the
    Rogan-Gladen rate of the second class; for more, ``functional`` of the corrected shares.
    ``validation``: (human labels, judge verdicts), with design ``weights`` (their items redrawn
    within their strata; None or a plain pair: unweighted).
    """
    validation_truth, validation_judged = validation
    validation_weights = getattr(validation, "weights", None)
    k = len(classes)
    truth, val = _indices(validation_truth, classes), _indices(validation_judged, classes)
    counts = np.bincount(truth * k + val, minlength=k * k).reshape(k, k)
    w = np.ones(truth.size) if validation_weights is None else validation_weights
    table, _ = _design(list(validation_truth), list(validation_judged), classes, w)
    problem = support_problem(counts, classes, correction.min_labels_per_class, table)
    if problem:
        return {"reason": problem}
    w = np.asarray(w, dtype=float)
    # Each stratum's members (one stratum when unweighted: the plain item bootstrap).
    strata = [
        np.flatnonzero((val == v) & (w == x))
        for v, x in np.unique(np.column_stack([val, w]), axis=0)
    ]
    if validation_weights is None:
        strata = [np.arange(truth.size)]
    a, b = _indices(judged_a, classes), _indices(judged_b, classes)
    _, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    members = [np.flatnonzero(codes == g) for g in range(codes.max() + 1)]
    value_a = _corrected_value(a, table, k, functional)
    value_b = _corrected_value(b, table, k, functional)
    rng = np.random.default_rng(settings.seed)
    diffs = np.full(settings.n_resamples, np.nan)
    for r in range(settings.n_resamples):
        drawn = rng.integers(0, len(members), len(members))
        items = np.concatenate([members[g] for g in drawn])
        v = np.concatenate([m[rng.integers(0, m.size, m.size)] for m in strata])
        c = np.bincount(truth[v] * k + val[v], weights=w[v], minlength=k * k).reshape(k, k)
        diffs[r] = _corrected_value(a[items], c, k, functional) - _corrected_value(
            b[items], c, k, functional
        )
    low, high = _percentiles(diffs, settings)
    known = diffs[~np.isnan(diffs)]
    if known.size == 0:
        p = float("nan")
    elif np.all(known == 0):
        p = 1.0
    else:
        p = float(min(1.0, 2 * min(np.mean(known <= 0), np.mean(known >= 0))))
    return {
        "value_a": value_a,
        "value_b": value_b,
        "diff": value_a - value_b,
        "diff_ci_low": low,
        "diff_ci_high": high,
        "p_value": p,
    }
