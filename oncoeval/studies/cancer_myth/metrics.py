"""PCS / PCR (§4.2), their breakdowns and judge agreement (Appendix C); paired comparisons between
models are oncoeval.stats.compare's.

PCS is the mean verifier score, PCR the share of score 1, both over the questions a model was
scored on; questions with a ``parse_error`` are counted in ``n_unscored`` and nowhere else.
Confidence intervals are percentile bootstraps over questions (oncoeval.stats.bootstrap).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from ...judges.correction import (
    DEFAULT_CORRECTION,
    Corrected,
    CorrectionSettings,
    Validation,
    corrected_distribution,
    corrected_rate,
)
from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import Clustered, mean_ci
from .data import CATEGORIES

SCORES = (-1, 0, 1)


NO_VALIDATION = "no judge validation (human_scores not set)"


def pcs_pcr(
    scores,
    settings: BootstrapSettings,
    validation=None,
    correction: CorrectionSettings = DEFAULT_CORRECTION,
    clusters=None,
) -> dict:
    """n, n_unscored, PCS and PCR with intervals for one set of per-question scores, whole
    clusters (``clusters``: the source record of each question, aligned; None: each question
    its own) resampled together (oncoeval.stats.compare.mean_ci).

    Next to them, PCS and PCR corrected for the verifier's errors measured on ``validation``
    (human scores, verifier scores on the readable validation items); oncoeval.judges.correction.
    """
    s = pd.to_numeric(pd.Series(scores, dtype="object"), errors="coerce").astype(float)
    keep = s.notna().to_numpy()
    scored = s[keep].to_numpy()
    c = None if clusters is None else np.asarray(list(clusters), dtype=object)[keep]
    pcs, pcs_lo, pcs_hi = mean_ci(scored, settings, c, value_range=(-1.0, 1.0))
    pcr, pcr_lo, pcr_hi = mean_ci((scored == 1).astype(float), settings, c, kind="binary")
    return {
        "n": int(scored.size),
        "n_clusters": Clustered.of(scored, c).n_clusters,
        "n_unscored": int(s.isna().sum()),
        "pcs": pcs,
        "pcs_ci_low": pcs_lo,
        "pcs_ci_high": pcs_hi,
        "pcr": pcr,
        "pcr_ci_low": pcr_lo,
        "pcr_ci_high": pcr_hi,
        **corrected_pcs_pcr(scored, validation, settings, correction, c),
    }


def corrected_pcs_pcr(scored, validation, settings, correction, clusters=None) -> dict:
    """PCR by Rogan-Gladen (score 1 vs not), PCS by inverting the 3x3 confusion matrix.

    A cell holds the reason instead of a number where the validation set cannot support the
    correction; the CI cells are then empty. ``clusters``: each scored question's cluster,
    resampled whole with the validation answers in each draw.
    """
    if isinstance(validation, str):  # why this row is not corrected
        pcs = pcr = Corrected(None, None, None, validation)
        return _corrected_cells(pcs, pcr)
    human, verifier = (None, None) if validation is None else validation
    if validation is None:
        pcs = pcr = Corrected(None, None, None, NO_VALIDATION)
    elif not (np.isin(scored, SCORES).all() and np.isin(verifier, SCORES).all()):
        pcs = pcr = Corrected(None, None, None, "verdicts are not -1/0/1 (a jury's mean)")
    else:
        human, verifier = (np.asarray(v, dtype=int) for v in validation)
        weights = getattr(validation, "weights", None)
        pcr = corrected_rate(
            scored == 1,
            human == 1,
            verifier == 1,
            settings,
            correction,
            clusters=clusters,
            validation_weights=weights,
        )
        _, pcs = corrected_distribution(
            scored.astype(int),
            Validation(human, verifier, weights),
            SCORES,
            settings,
            correction,
            functional=lambda shares: float(shares @ np.array(SCORES)),
            clusters=clusters,
        )
    return _corrected_cells(pcs, pcr)


def _corrected_cells(pcs: Corrected, pcr: Corrected) -> dict:
    return {
        "pcs_corrected": pcs.cell,
        "pcs_corrected_ci_low": pcs.ci_low,
        "pcs_corrected_ci_high": pcs.ci_high,
        "pcr_corrected": pcr.cell,
        "pcr_corrected_ci_low": pcr.ci_low,
        "pcr_corrected_ci_high": pcr.ci_high,
    }


def for_model(model: str, validation=None, correction=DEFAULT_CORRECTION, own_verifier=None):
    """The correction arguments of one model's rows: a model judged by its own verifier
    (``own_verifier``: model -> verifier, cancer_myth.verifier_for) is not corrected by the
    study verifier's validation; its cells say why."""
    own = (own_verifier or {}).get(model)
    if own and validation is not None:
        validation = f"judged by {own}, not the validated verifier"
    return {"validation": validation, "correction": correction}


def _clusters(df: pd.DataFrame):
    """Each question's cluster (the scores' ``cluster`` column), None where the file has none."""
    return df["cluster"].tolist() if "cluster" in df else None


def overall_table(scores_by_model: dict[str, pd.DataFrame], settings, **correct) -> pd.DataFrame:
    rows = [
        {
            "model": m,
            **pcs_pcr(df["score"], settings, **for_model(m, **correct), clusters=_clusters(df)),
        }
        for m, df in scores_by_model.items()
    ]
    return pd.DataFrame(rows, columns=["model"] + list(pcs_pcr([], settings)))


def _grouped(scores_by_model, settings, column, values, label, **correct) -> pd.DataFrame:
    rows = []
    for model, df in scores_by_model.items():
        for value in values:
            part = df[df[column] == value]
            if len(part):
                own = for_model(model, **correct)
                cells = pcs_pcr(part["score"], settings, **own, clusters=_clusters(part))
                rows.append({"model": model, label: value, **cells})
    return pd.DataFrame(rows, columns=["model", label] + list(pcs_pcr([], settings)))


def category_table(scores_by_model, settings, **correct) -> pd.DataFrame:
    """Category-wise PCS and PCR per model (Figure 7), categories in the paper's order."""
    present = {c for df in scores_by_model.values() for c in df["category"]}
    order = [c for c in CATEGORIES if c in present] + sorted(present - set(CATEGORIES))
    return _grouped(scores_by_model, settings, "category", order, "category", **correct)


def generator_table(scores_by_model, settings, exclude=("manual",), **correct) -> pd.DataFrame:
    """PCS of each responder on each generator's questions (Figure 6b); ``manual`` excluded."""
    present = sorted(
        {g for df in scores_by_model.values() for g in df["from_model"]} - set(exclude)
    )
    table = _grouped(scores_by_model, settings, "from_model", present, "generator", **correct)
    return table.rename(columns={"model": "responder"})


def judge_agreement(human, verifier, settings, verifier_id: str = ""):
    """(summary table, confusion matrix) of verifier scores against human scores.

    ``verifier`` holds NaN where the verifier's reply was unreadable: those pairs are counted in
    ``n_unscored`` and left out of every agreement figure. Binary agreement collapses -1/0 vs 1.
    """
    h = np.asarray(human, dtype=float)
    v = np.asarray(verifier, dtype=float)
    keep = ~np.isnan(v)
    unscored_by_human = [int(np.sum(h[~keep] == s)) for s in SCORES]
    h, v = h[keep], v[keep]
    exact = (h == v).astype(float)
    binary = ((h == 1) == (v == 1)).astype(float)
    e, e_lo, e_hi = mean_ci(exact, settings, kind="binary")
    b, b_lo, b_hi = mean_ci(binary, settings, kind="binary")
    if len(h) and len(set(h) | set(v)) > 1:
        kappa = float(cohen_kappa_score(h.astype(int), v.astype(int), labels=list(SCORES)))
    else:
        kappa = np.nan
    summary = pd.DataFrame(
        [
            {
                "verifier": verifier_id,
                "n": int(keep.sum()),
                "n_unscored": int((~keep).sum()),
                "exact_agreement": e,
                "exact_agreement_ci_low": e_lo,
                "exact_agreement_ci_high": e_hi,
                "binary_agreement": b,
                "binary_agreement_ci_low": b_lo,
                "binary_agreement_ci_high": b_hi,
                "cohen_kappa": kappa,
            }
        ]
    )
    cm = confusion_matrix(h.astype(int), v.astype(int), labels=list(SCORES)) if len(h) else None
    cm = np.zeros((3, 3), dtype=int) if cm is None else cm
    confusion = pd.DataFrame(cm, columns=[f"verifier_{s}" for s in SCORES])
    confusion.insert(0, "human", list(SCORES))
    confusion["verifier_unscored"] = unscored_by_human
    return summary, confusion
