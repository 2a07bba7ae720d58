"""Cross-model consistency (§3.2.2): consensus labels and per-model agreement features.

Both cross-model proxies label a note with a *full path* that the modal paths of at least
``min_agree`` models (default 2) share exactly (the paper: convergence is exact path match). A
model votes on a note only when its own self-consistency there passes ``delta``: the k-way path
overlap for the path variant, the modal-treatment share for the treatment variant (the two
variants differ only in this filter, as the public code builds them). Its vote is its modal path.

When several paths have the most votes, the one with the highest summed Jaccard to the other voted
paths wins (the public code's rule); then the longer path (the public code's rule when no other
path was voted); then the lexicographically first. A tie therefore never drops a note. Notes
without ``min_agree`` equal votes are excluded (never penalised).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from .metrics import path_overlap

# variant -> the self-consistency column whose value must pass delta for a model to vote
VOTE_FILTERS = {"path": "self_path_overlap", "treatment": "self_treatment_share"}


def break_tie(tied: list[tuple], voted: list[tuple]) -> tuple:
    """The tied path with the highest summed Jaccard to the other voted paths, then the longer,
    then the lexicographically first (``A -> B`` strings compared)."""
    others = [v for v in dict.fromkeys(voted) if v not in tied]

    def rank(path):
        jaccard = sum(path_overlap([path, o]) for o in others)
        return (-jaccard, -len(path), " -> ".join(path))

    return min(tied, key=rank)


def consensus(votes: dict, min_agree: int) -> tuple[object | None, int, str]:
    """(label, number of models agreeing, status) from {model: path}; None votes abstain."""
    voted = [v for v in votes.values() if v]
    counts = Counter(voted)
    if not counts:
        return None, 0, "no votes"
    n = max(counts.values())
    if n < min_agree:
        return None, n, f"fewer than {min_agree} models agree"
    tied = [v for v, c in counts.items() if c == n]
    if len(tied) > 1:
        return break_tie(tied, voted), n, f"tie between {len(tied)} paths broken"
    return tied[0], n, "ok"


def passes(value, delta: float) -> bool:
    return value is not None and value == value and float(value) >= delta - 1e-12


def consensus_labels(modal: pd.DataFrame, min_agree: int, delta: float) -> pd.DataFrame:
    """One row per note from a (model, patient_id, modal_path, self_path_overlap,
    self_treatment_share) frame: for each variant the consensus path (``path_label``,
    ``treatment_label``), the models that voted, how many agree, and the status."""
    rows = []
    for pid, group in modal.groupby("patient_id", sort=True):
        row = {"patient_id": pid, "n_models": len(group)}
        for variant, column in VOTE_FILTERS.items():
            votes = {
                r.model: _as_tuple(r.modal_path) if passes(getattr(r, column), delta) else None
                for r in group.itertuples()
            }
            label, n, status = consensus(votes, min_agree)
            row[f"{variant}_label"] = " -> ".join(label) if label else ""
            row[f"{variant}_voters"] = sum(v is not None for v in votes.values())
            row[f"{variant}_agreeing"] = n
            row[f"{variant}_status"] = status
        rows.append(row)
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
