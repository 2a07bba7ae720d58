"""Path overlap (Appendix B), treatment match (Appendix C) and self-consistency of rollouts.

A path is a tuple of node ids; ``None`` stands for a prediction that could not be parsed (or a
failed call). Such a prediction has no nodes and no final treatment: it scores 0 against any
non-empty label, and it breaks the agreement of a set of rollouts, never adds to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

Path = tuple[str, ...] | None


def path_overlap(paths: Sequence[Path]) -> float:
    """k-way Jaccard |∩ V_i| / |∪ V_i| of the node sets (Appendix B).

    With an empty union the appendix defines 1 (all paths empty); a set that contains an
    unparseable prediction (None) then scores 0 instead, so a failure never reads as agreement.
    """
    if not paths:
        return float("nan")
    sets = [set(p) if p else set() for p in paths]
    union = set().union(*sets)
    if not union:
        return 0.0 if any(p is None for p in paths) else 1.0
    return len(set.intersection(*sets)) / len(union)


def final_node(path: Path) -> str | None:
    return path[-1] if path else None


def treatment_match(pred: Path, label: Path) -> float:
    """1 if the final nodes are equal (Appendix C, case 1); an empty prediction scores 0."""
    if not pred or not label:
        return 0.0
    return float(pred[-1] == label[-1])


def treatment_share(paths: Sequence[Path]) -> float:
    """Share of the k rollouts ending at the modal final node (Appendix C, case 2).

    Unparseable rollouts count in k but never form the mode.
    """
    if not paths:
        return float("nan")
    finals = Counter(final_node(p) for p in paths if p)
    return (max(finals.values()) / len(paths)) if finals else 0.0


def modal(values: Sequence) -> object | None:
    """Most frequent non-empty value; ties go to the one seen first (rollout order)."""
    counts = Counter(v for v in values if v)
    if not counts:
        return None
    best = max(counts.values())
    return next(v for v in values if v and counts[v] == best)


def modal_path(paths: Sequence[Path]) -> Path:
    return modal([tuple(p) if p else None for p in paths])


def modal_treatment(paths: Sequence[Path]) -> str | None:
    return modal([final_node(p) for p in paths])


def self_consistency(paths: Sequence[Path]) -> dict:
    """The per-patient consistency signals of k rollouts."""
    return {
        "self_path_overlap": path_overlap(paths),
        "self_treatment_share": treatment_share(paths),
        "modal_path": modal_path(paths),
        "modal_treatment": modal_treatment(paths),
    }


def against_label(paths: Sequence[Path], label: Path) -> dict:
    """Mean over the k rollouts of path overlap and treatment match with a label."""
    if not paths:
        return {"path_overlap": float("nan"), "treatment_match": float("nan")}
    return {
        "path_overlap": sum(path_overlap([p, label]) for p in paths) / len(paths),
        "treatment_match": sum(treatment_match(p, label) for p in paths) / len(paths),
    }
