"""Cross-model consistency (§3.2.2): consensus labels and per-model agreement features.

Each model contributes one vote per note: its modal path (exact match) or its modal final
treatment. A note gets a consensus label when at least ``min_agree`` models (default 2) vote the
same and no other value has as many votes; otherwise it is excluded (never penalised).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd


def consensus(votes: dict, min_agree: int = 2) -> tuple[object | None, int, str]:
    """(label, number of models agreeing, status) from {model: vote}; None votes abstain."""
    counts = Counter(v for v in votes.values() if v)
    if not counts:
        return None, 0, "no votes"
    ranked = counts.most_common()
    value, n = ranked[0]
    if n < min_agree:
        return None, n, f"fewer than {min_agree} models agree"
    if len(ranked) > 1 and ranked[1][1] == n:
        return None, n, "tie between paths"
    return value, n, "ok"


def consensus_labels(modal: pd.DataFrame, min_agree: int = 2) -> pd.DataFrame:
    """One row per note from a (model, patient_id, modal_path, modal_treatment) frame.

    ``path_label``: the consensus modal path; ``treatment_label``: the consensus final treatment
    and ``treatment_label_path``, the path most of the agreeing models give for it (for scoring
    path overlap on the treatment benchmark).
    """
    rows = []
    for pid, group in modal.groupby("patient_id", sort=True):
        paths = {r.model: _as_tuple(r.modal_path) for r in group.itertuples()}
        treats = {r.model: (r.modal_treatment or None) for r in group.itertuples()}
        path_label, path_n, path_status = consensus(paths, min_agree)
        treat_label, treat_n, treat_status = consensus(treats, min_agree)
        treat_path = None
        if treat_label is not None:
            agreeing = {m: paths[m] for m, t in treats.items() if t == treat_label and paths[m]}
            treat_path = Counter(agreeing.values()).most_common(1)[0][0] if agreeing else None
        rows.append(
            {
                "patient_id": pid,
                "n_models": len(group),
                "path_label": " -> ".join(path_label) if path_label else "",
                "path_agreeing": path_n,
                "path_status": path_status,
                "treatment_label": treat_label or "",
                "treatment_label_path": " -> ".join(treat_path) if treat_path else "",
                "treatment_agreeing": treat_n,
                "treatment_status": treat_status,
            }
        )
    return pd.DataFrame(rows)


def agreement_features(modal: pd.DataFrame) -> pd.DataFrame:
    """Per (model, patient): share of the *other* models with the same modal path / treatment.

    NaN when the note was answered by a single model (nothing to agree with).
    """
    out = []
    for _pid, group in modal.groupby("patient_id", sort=True):
        paths = [_as_tuple(p) for p in group["modal_path"]]
        treats = [t or None for t in group["modal_treatment"]]
        n = len(group)
        for i, row in enumerate(group.itertuples()):
            if n < 2:
                same_path = same_treat = np.nan
            else:
                others = [j for j in range(n) if j != i]
                same_path = sum(bool(paths[i]) and paths[j] == paths[i] for j in others) / (n - 1)
                same_treat = sum(bool(treats[i]) and treats[j] == treats[i] for j in others) / (
                    n - 1
                )
            out.append(
                {
                    "model": row.model,
                    "patient_id": row.patient_id,
                    "cross_path_agreement": same_path,
                    "cross_treatment_agreement": same_treat,
                }
            )
    return pd.DataFrame(
        out, columns=["model", "patient_id", "cross_path_agreement", "cross_treatment_agreement"]
    )


def _as_tuple(value) -> tuple[str, ...] | None:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split("->"))
    return tuple(value)
