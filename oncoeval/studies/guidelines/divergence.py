"""Error analysis (Appendix D): where paths part, and how many label errors rollouts reveal.

A divergence point of two paths is the last node they share before they differ (``START`` when
they differ at the first node) with the two next nodes (``END`` when one path stops). Among a
model's rollouts, each rollout that differs from the modal path gives one divergence point; the
most frequent decision nodes are the model's "points of confusion", found without labels. A
label error is a patient whose modal path differs from the expert label; it is *flagged* when its
decision node is among the model's top-N rollout decision nodes.

Figure 6 compares *divergence pairs*: where a set of paths parts, every pair of the distinct
next nodes. Pairs where a model's k rollouts part are counted against pairs where its modal path
leaves the expert label, over the pairs seen more than ``gamma`` times.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
from scipy import stats
from sklearn.metrics import r2_score

from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import mean_ci

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
    mean, lo, hi = mean_ci(
        flagged, settings, kind="binary"
    )  # one label error per patient: its own cluster
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
    return summary, long, list(zip(errors, flagged, strict=True))


def pooled_row(flagged_all: list[tuple], summaries: list[dict], top_n, settings) -> dict:
    """The row of every model's label errors together: (patient, flagged) pairs, the errors of
    one patient (by several models) resampled together."""
    patients = [p for p, _ in flagged_all]
    flagged_all = [v for _, v in flagged_all]
    mean, lo, hi = mean_ci(flagged_all, settings, patients, kind="binary")
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


# ---------------------------------------------------------------- Figure 6: divergence pairs
def divergence_targets(paths) -> tuple[str, tuple[str, ...]] | None:
    """Where a set of paths parts: (last node all share, or START; the distinct next nodes,
    ``<node>-end`` for a path that stops there). None when fewer than two paths or all equal."""
    paths = [tuple(p) for p in paths if p]
    if len(paths) < 2 or len(set(paths)) == 1:
        return None
    shared = 0
    while all(len(p) > shared for p in paths) and len({p[shared] for p in paths}) == 1:
        shared += 1
    source = paths[0][shared - 1] if shared else START
    targets = {p[shared] if len(p) > shared else f"{p[shared - 1]}-end" for p in paths}
    return source, tuple(sorted(targets))


def _pairs(targets) -> list[tuple[str, str]]:
    return list(combinations(sorted(targets), 2))


def rollout_pairs(paths_by_patient: dict[str, list]) -> Counter:
    """Per patient, every pair of next nodes where the model's own rollouts part (unparseable
    rollouts left out), counted over patients."""
    counts: Counter = Counter()
    for paths in paths_by_patient.values():
        found = divergence_targets(paths)
        if found:
            counts.update(_pairs(found[1]))
    return counts


def label_pairs(predictions: dict[str, tuple], labels: dict[str, tuple]) -> Counter:
    """Per patient, the pair of next nodes where the prediction leaves the expert label."""
    counts: Counter = Counter()
    for pid, label in labels.items():
        found = divergence_targets([label, predictions.get(pid)])
        if found:
            counts.update(_pairs(found[1]))
    return counts


def pair_agreement(rollouts: Counter, labels: Counter, gamma: int) -> tuple[dict, list[dict]]:
    """Agreement of the two pair frequencies over the pairs seen more than ``gamma`` times in
    either (the public script's filter, ``count > gamma``): Pearson, Spearman and R² of the
    rollout counts as a predictor of the label counts. Returns (summary, one row per pair)."""
    pairs = sorted(set(rollouts) | set(labels))
    kept = [p for p in pairs if rollouts.get(p, 0) > gamma or labels.get(p, 0) > gamma]
    rows = [
        {
            "pair": " + ".join(p),
            "rollout_count": rollouts.get(p, 0),
            "label_count": labels.get(p, 0),
            "kept": p in kept,
        }
        for p in pairs
    ]
    x = np.array([rollouts.get(p, 0) for p in kept], float)
    y = np.array([labels.get(p, 0) for p in kept], float)
    summary = {
        "n_pairs": len(pairs),
        "n_kept": len(kept),
        "pearson": np.nan,
        "pearson_p": np.nan,
        "spearman": np.nan,
        "spearman_p": np.nan,
        "r2": np.nan,
        "note": "",
    }
    if len(kept) < 3:
        summary["note"] = f"needs >= 3 pairs seen more than gamma={gamma} times"
    elif np.ptp(x) == 0 or np.ptp(y) == 0:
        summary["note"] = "constant counts: correlation undefined"
    else:
        pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
        summary.update(
            pearson=float(pearson.statistic),
            pearson_p=float(pearson.pvalue),
            spearman=float(spearman.statistic),
            spearman_p=float(spearman.pvalue),
            r2=float(r2_score(y, x)),
        )
    return summary, rows
