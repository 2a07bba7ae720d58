"""Error analysis (Appendix D): where paths part, and how many label errors rollouts reveal.

A divergence point of two paths is the last node they share before they differ (``START`` when
they differ at the first node) with the two next nodes (``END`` when one path stops). Among a
model's rollouts, each rollout that differs from the modal path gives one divergence point; the
most frequent decision nodes are the model's "points of confusion", found without labels. A
label error is a patient whose modal path differs from the expert label; it is *flagged* when its
decision node is among the model's top-N rollout decision nodes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from ...stats import BootstrapSettings, bootstrap_mean_ci

START, END, NO_ANSWER = "START", "END", "NO_ANSWER"


def divergence(a, b) -> tuple[str, str, str] | None:
    """(decision node, next node of a, next node of b), or None when the paths are equal."""
    if a is None or b is None:
        return (NO_ANSWER, a[0] if a else END, b[0] if b else END)
    a, b = tuple(a), tuple(b)
    if a == b:
        return None
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    decision = a[i - 1] if i else START
    return decision, a[i] if i < len(a) else END, b[i] if i < len(b) else END


def rollout_points(paths_by_patient: dict[str, list], modal: dict[str, tuple]) -> Counter:
    """Counter of (decision node, sorted branch pair) over rollouts differing from the mode."""
    counts: Counter = Counter()
    for pid, paths in paths_by_patient.items():
        mode = modal.get(pid)
        if not mode:
            continue
        for p in paths:
            if p is None:
                continue
            d = divergence(mode, p)
            if d:
                counts[(d[0], " | ".join(sorted(d[1:])))] += 1
    return counts


def label_points(modal: dict[str, tuple], labels: dict[str, tuple]) -> dict[str, tuple]:
    """patient -> divergence of the modal path from the label, for patients with an error."""
    out = {}
    for pid, label in labels.items():
        d = divergence(label, modal.get(pid))
        if d:
            out[pid] = d
    return out


def analyse(model, paths_by_patient, modal, labels, top_n, settings: BootstrapSettings):
    """(summary row, long rows of divergence points) for one model."""
    roll = rollout_points(paths_by_patient, modal)
    top_nodes: list[str] = []
    for (node, _), _n in sorted(roll.items(), key=lambda kv: (-kv[1], kv[0])):
        if node not in top_nodes:
            top_nodes.append(node)
    top_nodes = top_nodes[:top_n]
    errors = label_points(modal, labels)
    flagged = [float(d[0] in top_nodes) for d in errors.values()]
    mean, lo, hi = bootstrap_mean_ci(flagged, settings)
    summary = {
        "model": model,
        "n_patients": len(labels),
        "n_label_errors": len(errors),
        "n_flagged": int(sum(flagged)),
        "share_flagged": mean,
        "ci_low": lo,
        "ci_high": hi,
        "n_rollout_divergences": int(sum(roll.values())),
        f"top{top_n}_rollout_points": ", ".join(top_nodes),
    }
    long = [
        {"model": model, "source": "rollouts", "decision_node": node, "branches": br, "count": n}
        for (node, br), n in sorted(roll.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    label_counts = Counter((d[0], " | ".join(sorted(d[1:]))) for d in errors.values())
    long += [
        {"model": model, "source": "label", "decision_node": node, "branches": br, "count": n}
        for (node, br), n in sorted(label_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return summary, long, flagged


def pooled_row(flagged_all: list[float], summaries: list[dict], top_n, settings) -> dict:
    mean, lo, hi = bootstrap_mean_ci(flagged_all, settings)
    return {
        "model": "all models",
        "n_patients": int(np.sum([s["n_patients"] for s in summaries])),
        "n_label_errors": len(flagged_all),
        "n_flagged": int(sum(flagged_all)),
        "share_flagged": mean,
        "ci_low": lo,
        "ci_high": hi,
        "n_rollout_divergences": int(np.sum([s["n_rollout_divergences"] for s in summaries])),
        f"top{top_n}_rollout_points": "",
    }


def summary_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)
