"""Meta-classifier: disjoint splits, known AUROCs, ROC averaging on a common FPR grid, k-means."""

import numpy as np
import pandas as pd
import pytest

from oncoeval.config.checks import filled_study_block
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines import metaclf
from oncoeval.studies.guidelines.metaclf import (
    FPR_GRID,
    held_out_split,
    interpolated_roc,
    mean_roc,
    split_patients,
)
from oncoeval.studies.guidelines.tables_meta import settings_from

BOOT = BootstrapSettings(n_resamples=200, seed=0)
# The schema defaults (C 0.1, 70% of patients in training, one split, seed 0).
SETTINGS = settings_from(filled_study_block({}, "guidelines"))


def constructed_rows(n_models=4, n_patients=40, seed=0):
    """Correct exactly when self-consistency is high: a perfectly separable problem."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for p in range(n_patients):
            correct = int((p + m) % 3 != 0)
            cons = rng.uniform(0.7, 1.0) if correct else rng.uniform(0.0, 0.3)
            rows.append(
                {
                    "model": f"m{m}",
                    "patient_id": f"p{p:02d}",
                    "correct": correct,
                    "self_path_overlap": cons,
                    "self_treatment_share": cons,
                }
            )
    return pd.DataFrame(rows)


def test_split_is_model_and_patient_disjoint():
    rows = constructed_rows()
    for r in range(3):
        train_p, test_p = split_patients(rows["patient_id"], 0.7, seed=0, repeat=r)
        assert train_p.isdisjoint(test_p) and len(train_p) == 28 and len(test_p) == 12
        train, test = held_out_split(rows, "m2", train_p, test_p)
        assert set(rows.loc[train, "model"]) == {"m0", "m1", "m3"}
        assert set(rows.loc[test, "model"]) == {"m2"}
        assert set(rows.loc[train, "patient_id"]).isdisjoint(rows.loc[test, "patient_id"])
    assert split_patients(rows["patient_id"], 0.7, 0) == split_patients(rows["patient_id"], 0.7, 0)


def test_separable_data_gives_auroc_one_for_every_held_out_model():
    rows = constructed_rows()
    table, curves, preds = metaclf.run_grid(rows, ["base"], SETTINGS, BOOT)
    assert [t["auroc"] for t in table] == [1.0] * 4
    assert all(t["accuracy"] == 1.0 and t["f1"] == 1.0 for t in table)
    assert np.allclose(mean_roc(list(curves["base"].values()))[1:], 1.0)
    assert len(preds) == 4 * 12


def test_uninformative_feature_gives_chance_auroc_on_average():
    rows = constructed_rows(n_models=6, n_patients=60)
    rng = np.random.default_rng(1)
    rows["self_path_overlap"] = rng.uniform(size=len(rows))
    rows["self_treatment_share"] = rng.uniform(size=len(rows))
    table, _, _ = metaclf.run_grid(rows, ["base"], SETTINGS, BOOT)
    assert abs(np.mean([t["auroc"] for t in table]) - 0.5) < 0.15


def test_roc_is_interpolated_on_the_common_grid():
    # y = 0,0,1,1 scored 0.1,0.6,0.4,0.9: ROC (0,0) (0,.5) (.5,.5) (.5,1) (1,1), AUROC 0.75
    tpr = interpolated_roc([0, 0, 1, 1], [0.1, 0.6, 0.4, 0.9])
    assert tpr[0] == 0.0
    assert tpr[np.isclose(FPR_GRID, 0.25)][0] == pytest.approx(0.5)
    assert tpr[np.isclose(FPR_GRID, 0.75)][0] == pytest.approx(1.0)
    assert np.trapezoid(tpr, FPR_GRID) == pytest.approx(0.75, abs=0.01)
    # averaging with a perfect classifier: the mean curve is the pointwise mean, not a subsample
    perfect = interpolated_roc([0, 1], [0.2, 0.8])
    mean = mean_roc([tpr, perfect])
    assert mean[np.isclose(FPR_GRID, 0.25)][0] == pytest.approx(0.75)
    assert interpolated_roc([1, 1], [0.2, 0.8]) is None


def test_one_model_gives_a_clear_row_not_a_crash():
    rows = constructed_rows(n_models=1)
    table, curves, _ = metaclf.run_grid(rows, ["base", "aggregated"], SETTINGS, BOOT)
    assert {t["status"] for t in table} == {"needs >= 2 models"}


def test_kmeans_separates_well_separated_groups():
    rows = constructed_rows()
    for col in metaclf.CROSS:
        rows[col] = rows["self_path_overlap"]
    out = metaclf.clustering_rows(rows, seed=0, boot=BOOT)
    assert out[0]["scope"] == "all" and out[0]["f1"] == 1.0 and out[0]["fp"] == 0


def test_vectorised_bootstrap_cis_match_the_one_at_a_time_definition():
    from sklearn.metrics import f1_score, roc_auc_score

    from oncoeval.studies.guidelines.metaclf import auroc_bootstrap_ci, f1_bootstrap_ci

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 30)
    p = np.round(rng.uniform(size=30), 1)  # ties on purpose
    boot = BootstrapSettings(n_resamples=300, seed=5)
    idx = np.random.default_rng(5).integers(0, 30, (300, 30))
    aucs = [roc_auc_score(y[i], p[i]) for i in idx if len(set(y[i])) == 2]
    f1s = [f1_score(y[i], (p[i] >= 0.5).astype(int), zero_division=0) for i in idx]
    assert auroc_bootstrap_ci(y, p, boot) == pytest.approx(tuple(np.quantile(aucs, [0.025, 0.975])))
    assert f1_bootstrap_ci(y, (p >= 0.5).astype(int), boot) == pytest.approx(
        tuple(np.quantile(f1s, [0.025, 0.975]))
    )


def test_clustering_reports_macro_f1_ari_and_nmi_by_hand():
    # two well separated groups of three rows; the high group holds one incorrect row:
    # predicted correct = high group -> y = 1 1 0 | 0 0 0, p = 1 1 1 | 0 0 0
    # TP 2, FP 1, TN 3, FN 0.  F1(correct) = 4/5, F1(incorrect) = 2*(1*3/4)/(1+3/4) = 6/7,
    # macro-F1 = (4/5 + 6/7) / 2 = 29/35.
    # ARI: sum C(n_ij, 2) = 1 + 3 = 4; clusters C(3,2)*2 = 6; classes C(2,2) + C(4,2) = 7;
    #   expected 6*7/C(6,2) = 2.8; ARI = (4 - 2.8) / ((6 + 7)/2 - 2.8) = 12/37.
    # NMI (arithmetic): I = 1/3 ln 2 + 1/6 ln(1/2) + 1/2 ln(3/2); H(clusters) = ln 2;
    #   H(classes) = -(1/3 ln 1/3 + 2/3 ln 2/3); NMI = 2 I / (H_c + H_k).
    high, low = [0.9, 0.92, 0.94], [0.1, 0.12, 0.14]
    rows = pd.DataFrame(
        {
            "model": ["m1", "m2"] * 3,
            "patient_id": [f"p{i}" for i in range(6)],
            "correct": [1, 1, 0, 0, 0, 0],
            "self_path_overlap": high + low,
            "self_treatment_share": high + low,
        }
    )
    row = metaclf.clustering_rows(rows, seed=0, boot=BOOT)[0]
    assert (row["tp"], row["fp"], row["tn"], row["fn"]) == (2, 1, 3, 0)
    assert row["accuracy"] == pytest.approx(5 / 6)
    assert row["f1_macro"] == pytest.approx(29 / 35)
    assert row["ari"] == pytest.approx(12 / 37)
    ln = np.log
    mutual = ln(2) / 3 + ln(1 / 2) / 6 + ln(3 / 2) / 2
    h_classes = -(ln(1 / 3) / 3 + 2 / 3 * ln(2 / 3))
    assert row["nmi"] == pytest.approx(2 * mutual / (ln(2) + h_classes))


def test_the_auroc_interval_draws_a_patients_rows_together():
    # 12 patients, each tested in two splits with the same label and score. Drawn by patient,
    # the 24 rows give the interval of the 12 patients' own rows: a resample of patients holds
    # each drawn patient's two copies, and doubling every row leaves an AUROC unchanged. Drawn
    # by row, the copies pass for twice the evidence and the interval narrows.
    from oncoeval.studies.guidelines.metaclf import auroc_bootstrap_ci

    y = np.array([0, 1] * 6)
    p = np.round(np.random.default_rng(7).uniform(size=12), 2)
    boot = BootstrapSettings(n_resamples=400, seed=11)
    patients = [f"p{i:02d}" for i in range(12)]
    once = auroc_bootstrap_ci(y, p, boot)
    by_patient = auroc_bootstrap_ci(np.tile(y, 2), np.tile(p, 2), boot, patients=patients * 2)
    by_row = auroc_bootstrap_ci(np.tile(y, 2), np.tile(p, 2), boot)
    assert by_patient == pytest.approx(once)
    assert by_row[1] - by_row[0] < 0.8 * (once[1] - once[0])


def test_held_out_predictions_name_the_patient_of_each_test_row():
    rows = pd.DataFrame(
        {
            "model": ["m1", "m2"] * 8,
            "patient_id": [f"p{i // 2}" for i in range(16)],
            "correct": [1, 0, 0, 1] * 4,
            "self_path_overlap": np.linspace(0, 1, 16),
        }
    )
    settings = metaclf.Settings(C=1.0, max_iter=200, train_fraction=0.5, seed=0, repeats=3)
    y, p, patients, reason = metaclf.predict_held_out(rows, ["self_path_overlap"], "m1", settings)
    assert reason is None and len(patients) == len(y) == len(p)
    m1 = rows[rows["model"] == "m1"].set_index("patient_id")["correct"]
    assert [m1[pid] for pid in patients] == list(y)  # each row's label is its patient's
