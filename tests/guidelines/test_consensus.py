"""Cross-model consensus labels and agreement features."""

import math

import pandas as pd

from oncoeval.studies.guidelines.consensus import agreement_features, consensus, consensus_labels

A, B, C = ("N-1-1", "N-2-1"), ("N-1-1", "N-3-1"), ("N-1-1", "N-4-1")


def test_two_agreeing_models_give_a_label():
    assert consensus({"m1": A, "m2": A, "m3": B}) == (A, 2, "ok")


def test_three_agreeing_models_give_a_label():
    assert consensus({"m1": A, "m2": A, "m3": A, "m4": C}) == (A, 3, "ok")


def test_no_agreement_excludes_the_note():
    label, n, status = consensus({"m1": A, "m2": B, "m3": C})
    assert (label, n) == (None, 1) and "fewer than 2" in status
    assert consensus({"m1": A, "m2": A, "m3": B, "m4": B})[0] is None  # tie
    assert consensus({"m1": None, "m2": None})[2] == "no votes"  # unparseable abstains


def test_labels_per_note_for_paths_and_treatments():
    modal = pd.DataFrame(
        [
            ("m1", "p1", "N-1-1 -> N-2-1", "N-2-1"),
            ("m2", "p1", "N-1-1 -> N-2-1", "N-2-1"),
            ("m3", "p1", "N-1-1 -> N-3-1", "N-3-1"),
            ("m1", "p2", "N-1-1 -> N-2-1", "N-2-1"),
            ("m2", "p2", "N-0-1 -> N-2-1", "N-2-1"),
            ("m3", "p2", "", ""),
        ],
        columns=["model", "patient_id", "modal_path", "modal_treatment"],
    )
    labels = consensus_labels(modal).set_index("patient_id")
    assert labels.loc["p1", "path_label"] == "N-1-1 -> N-2-1"
    assert labels.loc["p1", "treatment_label"] == "N-2-1"
    # p2: the paths differ, the treatments agree (2 of 3; the empty answer abstains)
    assert labels.loc["p2", "path_label"] == ""
    assert labels.loc["p2", "treatment_label"] == "N-2-1"
    assert labels.loc["p2", "treatment_agreeing"] == 2
    feats = agreement_features(modal).set_index(["model", "patient_id"])
    assert feats.loc[("m1", "p1"), "cross_path_agreement"] == 1 / 2
    assert feats.loc[("m3", "p1"), "cross_treatment_agreement"] == 0.0
    assert feats.loc[("m3", "p2"), "cross_treatment_agreement"] == 0.0  # no answer agrees with none


def test_single_model_has_no_agreement_feature():
    modal = pd.DataFrame(
        [("m1", "p1", "N-1-1 -> N-2-1", "N-2-1")],
        columns=["model", "patient_id", "modal_path", "modal_treatment"],
    )
    assert math.isnan(agreement_features(modal)["cross_path_agreement"].iloc[0])
