"""Meta-classifier (§3.3, §4.3, Appendices F-H): is a model's modal final treatment correct?

Rows are (model, patient) on the expert-labelled patients. For each held-out model in turn, the
patients are split (seeded) into a training and a test fraction; the classifier is trained on
the *other* models' rows of the training patients and tested on the held-out model's rows of the
test patients, so train and test share neither a model nor a patient. With ``repeats > 1`` the
split is redrawn and the test predictions of all repeats are pooled.

Classifier: StandardScaler + LogisticRegression (L2, C=0.1, lbfgs, class_weight="balanced",
max_iter 10000), as Appendix H. Unsupervised baseline: k-means (2 clusters) on the standardised
consistency features, clusters mapped to correct/incorrect by the better of the two assignments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    adjusted_rand_score,
    f1_score,
    normalized_mutual_info_score,
    roc_auc_score,
    roc_curve,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ...stats.bootstrap import BootstrapSettings, auroc_rows, bootstrap_stat_ci

SELF = ["self_path_overlap", "self_treatment_share"]
CROSS = ["cross_path_agreement", "cross_treatment_agreement"]
SYNTH = [
    f"{p}__{m}"
    for p in ("synthetic_structured", "synthetic_unstructured")
    for m in ("path_overlap", "treatment_match")
]
CONS = [
    f"{p}__{m}"
    for p in ("self_consistency_path", "self_consistency_treatment")
    for m in ("path_overlap", "treatment_match")
]
# Table 2. "Cons. Bench" are the self-consistency benchmarks: they need no other model, which is
# what keeps the Internal set internal.
FEATURE_SETS = {
    "base": SELF,
    "internal": SELF + SYNTH + CONS,
    "aggregated": CROSS,
    "base_aggregated": SELF + CROSS,
    "all": SELF + SYNTH + CONS + CROSS,
}
FPR_GRID = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True)
class Settings:
    """The meta_classifier block of the filled study settings (aggregate.settings_from)."""

    C: float
    max_iter: int
    train_fraction: float
    seed: int
    repeats: int


def build_rows(scores: pd.DataFrame, cross: pd.DataFrame, proxy: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, labelled patient): target ``correct`` and every feature column."""
    rows = scores[(scores["note_set"] == "labelled") & scores["modal_treatment_correct"].notna()]
    rows = rows.copy()
    rows["patient_id"] = rows["patient_id"].astype(str)
    rows["correct"] = rows["modal_treatment_correct"].astype(int)
    if len(cross):
        cross = cross.assign(patient_id=cross["patient_id"].astype(str))
        rows = rows.merge(cross, on=["model", "patient_id"], how="left")
    for col in CROSS:
        if col not in rows:
            rows[col] = np.nan
    wide = proxy.assign(feature=proxy["proxy"] + "__" + proxy["metric"]).pivot_table(
        index="model", columns="feature", values="accuracy", aggfunc="first"
    )
    rows = rows.merge(wide, left_on="model", right_index=True, how="left")
    for col in SYNTH + CONS:
        if col not in rows:
            rows[col] = np.nan
    keep = ["model", "patient_id", "correct"] + SELF + CROSS + SYNTH + CONS
    return rows[keep].reset_index(drop=True)


def usable_features(rows: pd.DataFrame, features: list[str]) -> list[str]:
    """Features with a value on every row (a proxy that could not be built drops out)."""
    return [f for f in features if f in rows and rows[f].notna().all()]


def split_patients(patients, train_fraction: float, seed: int, repeat: int = 0):
    """(train, test) patient sets, seeded, disjoint, covering every patient."""
    patients = sorted(set(map(str, patients)))
    rng = np.random.default_rng([seed, repeat])
    order = rng.permutation(len(patients))
    n_train = int(round(train_fraction * len(patients)))
    n_train = min(max(n_train, 1), len(patients) - 1) if len(patients) > 1 else len(patients)
    train = {patients[i] for i in order[:n_train]}
    return train, set(patients) - train


def held_out_split(rows: pd.DataFrame, model: str, train_patients: set, test_patients: set):
    """Boolean masks: train = other models x train patients; test = model x test patients."""
    pid = rows["patient_id"].astype(str)
    train = (rows["model"] != model) & pid.isin(train_patients)
    test = (rows["model"] == model) & pid.isin(test_patients)
    return train.to_numpy(), test.to_numpy()


def make_classifier(settings: Settings):
    return make_pipeline(
        StandardScaler(),
        LogisticRegression(
            C=settings.C,
            l1_ratio=0.0,  # L2
            solver="lbfgs",
            class_weight="balanced",
            max_iter=settings.max_iter,
            random_state=settings.seed,
        ),
    )


def predict_held_out(rows: pd.DataFrame, features: list[str], model: str, settings: Settings):
    """Pooled test (y, p, patients) of a held-out model over the repeats, or a reason it cannot
    be done. A patient is in the test set of several repeats: its rows are one cluster."""
    ys, ps, patients = [], [], []
    reason = None
    for r in range(settings.repeats):
        train_p, test_p = split_patients(
            rows["patient_id"], settings.train_fraction, settings.seed, r
        )
        train, test = held_out_split(rows, model, train_p, test_p)
        y_train = rows.loc[train, "correct"].to_numpy()
        if not test.any():
            reason = "no test rows"
            continue
        if len(set(y_train)) < 2:
            reason = "training rows have a single class"
            continue
        clf = make_classifier(settings).fit(rows.loc[train, features].to_numpy(float), y_train)
        ys.append(rows.loc[test, "correct"].to_numpy())
        ps.append(clf.predict_proba(rows.loc[test, features].to_numpy(float))[:, 1])
        patients.append(rows.loc[test, "patient_id"].astype(str).to_numpy())
    if not ys:
        return None, None, None, reason
    return np.concatenate(ys), np.concatenate(ps), np.concatenate(patients), None


def auroc(y, p) -> float:
    y = np.asarray(y)
    return float(roc_auc_score(y, p)) if len(set(y.tolist())) == 2 else float("nan")


def _f1_rows(y, pred, indices) -> np.ndarray:
    """F1 of every resample at once (0 where undefined, as f1_score's zero_division=0)."""
    yb, pb = y[indices], pred[indices]
    tp = (yb & pb).sum(axis=1)
    denom = 2 * tp + ((1 - yb) & pb).sum(axis=1) + (yb & (1 - pb)).sum(axis=1)
    return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0).astype(float)


def auroc_bootstrap_ci(y, p, settings: BootstrapSettings, min_units: int = 4, patients=None):
    """Percentile CI of the AUROC over resampled rows, a patient's rows drawn together when
    ``patients`` names them (resamples of one class are skipped)."""
    y, p = np.asarray(y, int), np.asarray(p, float)
    if len(set(y.tolist())) < 2:
        return float("nan"), float("nan")
    return bootstrap_stat_ci(
        lambda idx: auroc_rows(y, p, idx), len(y), settings, min_units, clusters=patients
    )


def f1_bootstrap_ci(y, pred, settings: BootstrapSettings, min_units: int = 4, patients=None):
    """Percentile CI of F1 over resampled rows, a patient's rows drawn together when
    ``patients`` names them (F1 is 0 when undefined)."""
    y, pred = np.asarray(y, int), np.asarray(pred, int)
    return bootstrap_stat_ci(
        lambda idx: _f1_rows(y, pred, idx), len(y), settings, min_units, clusters=patients
    )


def classification_metrics(y, p, settings: BootstrapSettings, patients=None) -> dict:
    y, p = np.asarray(y), np.asarray(p)
    pred = (p >= 0.5).astype(int)
    lo, hi = auroc_bootstrap_ci(y, p, settings, patients=patients)
    return {
        "auroc": auroc(y, p),
        "auroc_ci_low": lo,
        "auroc_ci_high": hi,
        "accuracy": float(accuracy_score(y, pred)),
        "f1": float(f1_score(y, pred, zero_division=0)),
        "n_test": len(y),
        "n_correct": int(y.sum()),
    }


def interpolated_roc(y, p, grid=FPR_GRID) -> np.ndarray | None:
    """TPR on a common FPR grid (linear interpolation of the ROC steps), or None (one class)."""
    if len(set(np.asarray(y).tolist())) < 2:
        return None
    fpr, tpr, _ = roc_curve(y, p)
    out = np.interp(grid, fpr, tpr)
    out[0] = 0.0
    return out


def mean_roc(curves: list[np.ndarray]) -> np.ndarray | None:
    curves = [c for c in curves if c is not None]
    if not curves:
        return None
    mean = np.mean(curves, axis=0)
    mean[-1] = 1.0
    return mean


def run_grid(rows: pd.DataFrame, feature_sets: list[str], settings: Settings, boot):
    """(table rows, {feature_set: {model: interpolated TPR}}, predictions frame)."""
    table, curves, preds = [], {}, []
    models = sorted(rows["model"].unique())
    for fs in feature_sets:
        features = usable_features(rows, FEATURE_SETS[fs])
        curves[fs] = {}
        for model in models:
            base = {"held_out_model": model, "feature_set": fs, "features": ",".join(features)}
            if len(models) < 2:
                table.append({**base, "status": "needs >= 2 models"})
                continue
            if not features:
                table.append({**base, "status": "no usable features (needs >= 2 models)"})
                continue
            y, p, patients, reason = predict_held_out(rows, features, model, settings)
            if y is None:
                table.append({**base, "status": reason})
                continue
            metrics = classification_metrics(y, p, boot, patients)
            status = "ok" if metrics["auroc"] == metrics["auroc"] else "test rows of one class"
            table.append({**base, **metrics, "status": status})
            curves[fs][model] = interpolated_roc(y, p)
            preds += [
                {"held_out_model": model, "feature_set": fs, "correct": int(a), "probability": b}
                for a, b in zip(y, p, strict=True)
            ]
    return table, curves, pd.DataFrame(preds)


def cluster(rows: pd.DataFrame, features: list[str], seed: int):
    """k-means (2) on standardised features; (assignment as predicted-correct, mapping note)."""
    X = StandardScaler().fit_transform(rows[features].to_numpy(float))
    labels = KMeans(n_clusters=2, n_init=10, random_state=seed).fit_predict(X)
    y = rows["correct"].to_numpy()
    options = [(labels == 1).astype(int), (labels == 0).astype(int)]
    scored = [
        (accuracy_score(y, o), f1_score(y, o, zero_division=0), i) for i, o in enumerate(options)
    ]
    best = max(scored)
    return options[best[2]], f"cluster {1 - best[2]} = correct"


def clustering_rows(rows: pd.DataFrame, seed: int, boot: BootstrapSettings) -> list[dict]:
    features = usable_features(rows, SELF + CROSS)
    if len(rows) < 2 or not features:
        return [{"scope": "all", "status": "not enough rows or features"}]
    pred, mapping = cluster(rows, features, seed)
    # The rollouts (and models) of one patient are resampled together.
    patients = rows["patient_id"].astype(str).to_numpy()
    out = []
    scopes = [("all", np.ones(len(rows), bool))] + [
        (m, (rows["model"] == m).to_numpy()) for m in sorted(rows["model"].unique())
    ]
    for scope, mask in scopes:
        y, p = rows["correct"].to_numpy()[mask], pred[mask]
        lo, hi = f1_bootstrap_ci(y, p, boot, patients=patients[mask])
        out.append(
            {
                "scope": scope,
                "features": ",".join(features),
                "mapping": mapping,
                "n": int(mask.sum()),
                "f1": float(f1_score(y, p, zero_division=0)),
                "f1_ci_low": lo,
                "f1_ci_high": hi,
                "accuracy": float(accuracy_score(y, p)),
                # the study's clustering scores: macro-F1 over both classes, and agreement of
                # the clusters with correct/incorrect that no cluster-to-class mapping changes
                "f1_macro": float(f1_score(y, p, average="macro", zero_division=0)),
                "ari": float(adjusted_rand_score(y, p)),
                "nmi": float(normalized_mutual_info_score(y, p)),
                "tp": int(((p == 1) & (y == 1)).sum()),
                "fp": int(((p == 1) & (y == 0)).sum()),
                "tn": int(((p == 0) & (y == 0)).sum()),
                "fn": int(((p == 0) & (y == 1)).sum()),
                "status": "ok",
            }
        )
    return out
