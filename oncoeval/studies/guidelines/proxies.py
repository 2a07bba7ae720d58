"""The six proxy benchmarks (§3.2) and how well each ranks models against the expert labels.

Proxies (each scored with both metrics, path overlap and treatment match):

- ``synthetic_structured`` / ``synthetic_unstructured``: kept synthetic notes, target = label.
- ``self_consistency_path`` / ``self_consistency_treatment``: a note is kept for a model when
  its k rollouts agree at least ``delta`` (k-way path overlap, resp. modal-treatment share); the
  label is the modal path; each rollout is scored against it and kept notes' scores are averaged
  over *all* notes, inconsistent notes counting 0.
- ``cross_model_path`` / ``cross_model_treatment``: a full path that the modal paths of at
  least two models share exactly, counting only the models whose path (resp. treatment)
  self-consistency passes ``delta`` on the note; notes without consensus are excluded.

Agreement: across models, Spearman ρ and RMSE between proxy accuracy and expert accuracy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ...stats.bootstrap import BootstrapSettings, bootstrap_stat_ci
from ...stats.compare import mean_ci
from . import compliance
from .metrics import path_overlap, treatment_match

PROXIES = (
    "synthetic_structured",
    "synthetic_unstructured",
    "self_consistency_path",
    "self_consistency_treatment",
    "cross_model_path",
    "cross_model_treatment",
)
METRICS = ("path_overlap", "treatment_match")
COLUMNS = [
    "model",
    "proxy",
    "metric",
    "accuracy",
    "ci_low",
    "ci_high",
    "coverage",
    "n",
    "status",
    *compliance.CELLS,
]


def _as_path(value):
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return None
    return tuple(p.strip() for p in str(value).split("->"))


def _rows(
    model, proxy, per_note: dict[str, list[float]], coverage, settings, status="ok", cells=None
):
    """One row per metric; ``cells``: the compliance counts over the scored predictions."""
    cells = cells or compliance.empty_counts()
    rows = []
    for metric in METRICS:
        values = per_note.get(metric, [])
        mean, lo, hi = mean_ci(values, settings)
        rows.append(
            {
                "model": model,
                "proxy": proxy,
                "metric": metric,
                "accuracy": mean,
                "ci_low": lo,
                "ci_high": hi,
                "coverage": coverage,
                "n": len(values),
                "status": status if values else (status if status != "ok" else "no notes"),
                **cells,
            }
        )
    return rows


def _score_against(paths: list, label, cells: dict | None = None) -> dict[str, float]:
    if cells is not None:
        for p in paths:
            compliance.add_pair(cells, p, label)
    return {
        "path_overlap": float(np.mean([path_overlap([p, label]) for p in paths])),
        "treatment_match": float(np.mean([treatment_match(p, label) for p in paths])),
    }


def self_consistency_scores(model, scores, paths_by_note, pool, delta, settings):
    """Both self-consistency proxies for one model on the notes of ``pool`` (note sets)."""
    notes = scores[scores["note_set"].isin(pool)]
    rows = []
    for proxy, signal in (
        ("self_consistency_path", "self_path_overlap"),
        ("self_consistency_treatment", "self_treatment_share"),
    ):
        per_note = {m: [] for m in METRICS}
        cells = compliance.empty_counts()
        kept = 0
        for row in notes.itertuples():
            consistent = getattr(row, signal) >= delta - 1e-12
            label = _as_path(row.modal_path)
            if consistent and label:
                kept += 1
                got = _score_against(paths_by_note.get(str(row.patient_id), []), label, cells)
            else:
                got = dict.fromkeys(METRICS, 0.0)
            for m in METRICS:
                per_note[m].append(got[m])
        coverage = kept / len(notes) if len(notes) else float("nan")
        rows += _rows(model, proxy, per_note, coverage, settings, cells=cells)
    return rows


def synthetic_scores(model, benchmark: pd.DataFrame | None, predictions: dict, settings):
    """Both synthetic proxies: the model's predictions on the kept synthetic notes."""
    rows = []
    for variant in ("structured", "unstructured"):
        proxy = f"synthetic_{variant}"
        if benchmark is None:
            rows += _rows(model, proxy, {}, float("nan"), settings, "no generator configured")
            continue
        part = benchmark[benchmark["variant"] == variant]
        kept = part[part["kept"].astype(str).eq("True")]
        per_note = {m: [] for m in METRICS}
        cells = compliance.empty_counts()
        for row in kept.itertuples():
            got = _score_against(
                predictions.get(row.item_id, [None]), _as_path(row.target_path), cells
            )
            for m in METRICS:
                per_note[m].append(got[m])
        coverage = len(kept) / len(part) if len(part) else float("nan")
        status = "ok" if len(part) else "variant not generated"
        rows += _rows(model, proxy, per_note, coverage, settings, status, cells)
    return rows


def cross_model_scores(models, paths_by_model, labels: pd.DataFrame, pool_ids, settings):
    """Both cross-model proxies for every model (labels from consensus.consensus_labels)."""
    rows = []
    labels = labels[labels["patient_id"].astype(str).isin(pool_ids)]
    for proxy, column in (
        ("cross_model_path", "path_label"),
        ("cross_model_treatment", "treatment_label"),
    ):
        labelled = labels[labels[column].fillna("") != ""]
        coverage = len(labelled) / len(pool_ids) if pool_ids else float("nan")
        for model in models:
            if len(models) < 2:
                rows += _rows(model, proxy, {}, float("nan"), settings, "needs >= 2 models")
                continue
            per_note = {m: [] for m in METRICS}
            cells = compliance.empty_counts()
            for row in labelled.itertuples():
                paths = paths_by_model[model].get(str(row.patient_id), [None])
                got = _score_against(paths, _as_path(getattr(row, column)), cells)
                for m in METRICS:
                    per_note[m].append(got[m])
            rows += _rows(model, proxy, per_note, coverage, settings, cells=cells)
    return rows


def agreement(proxy_scores: pd.DataFrame, expert: pd.DataFrame, settings: BootstrapSettings):
    """Spearman ρ and RMSE across models, per proxy and metric, with coverage.

    ``expert`` has one row per model with ``path_overlap`` and ``treatment_match`` means.
    """
    rows = []
    for proxy in PROXIES:
        for metric in METRICS:
            part = proxy_scores[
                (proxy_scores["proxy"] == proxy) & (proxy_scores["metric"] == metric)
            ]
            merged = part.merge(expert[["model", metric]], on="model").dropna(
                subset=["accuracy", metric]
            )
            x = merged["accuracy"].to_numpy(float)
            y = merged[metric].to_numpy(float)
            row = {
                "proxy": proxy,
                "metric": metric,
                "spearman": float("nan"),
                "spearman_ci_low": float("nan"),
                "spearman_ci_high": float("nan"),
                "rmse": float(np.sqrt(np.mean((x - y) ** 2))) if len(x) else float("nan"),
                "coverage": float(part["coverage"].mean()) if len(part) else float("nan"),
                "n_models": len(x),
                "note": "",
            }
            if len(x) < 2:
                statuses = sorted(set(part["status"]) - {"ok"})
                row["note"] = "needs >= 2 models" + (
                    f" ({'; '.join(statuses)})" if statuses else ""
                )
            elif np.ptp(x) == 0 or np.ptp(y) == 0:
                row["note"] = "constant accuracies: rank correlation undefined"
            else:
                row["spearman"] = float(stats.spearmanr(x, y).statistic)
                lo, hi = bootstrap_stat_ci(
                    lambda idx, x=x, y=y: np.array([_spearman(x[i], y[i]) for i in idx]),
                    len(x),
                    settings,
                )
                row["spearman_ci_low"], row["spearman_ci_high"] = lo, hi
            rows.append(row)
    return pd.DataFrame(rows)


def _spearman(x, y) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)
