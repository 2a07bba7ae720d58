"""Cross-model consensus (§3.2.2: exact path match of the models' modal paths) and agreement
features."""

import math

import pandas as pd

from oncoeval.studies.guidelines.consensus import (
    agreement_features,
    break_tie,
    consensus,
    consensus_labels,
)

A, B, C = ("N-1-1", "N-2-1"), ("N-1-1", "N-3-1"), ("N-1-1", "N-4-1")


def test_two_agreeing_models_give_a_label():
    assert consensus({"m1": A, "m2": A, "m3": B}, min_agree=2) == (A, 2, "ok")


def test_three_of_four_models_agreeing_on_a_path_give_the_label():
    # the public script only takes a path voted exactly twice and drops this note; the paper
    # ("two or more models converge") keeps it
    assert consensus({"m1": A, "m2": A, "m3": A, "m4": C}, min_agree=2) == (A, 3, "ok")


def test_no_agreement_excludes_the_note():
    label, n, status = consensus({"m1": A, "m2": B, "m3": C}, min_agree=2)
    assert (label, n) == (None, 1) and "fewer than 2" in status
    assert consensus({"m1": None, "m2": None}, min_agree=2)[2] == "no votes"  # unparseable abstains


def test_a_tie_is_broken_by_summed_jaccard_to_the_other_voted_paths():
    # votes: P twice, Q twice, R once.  P = a b c, Q = a d e, R = a b f.
    # Jaccard(P, R) = |{a,b}| / |{a,b,c,f}| = 2/4 = 0.5; Jaccard(Q, R) = |{a}| / |{a,b,d,e,f}| = 1/5
    P, Q, R = ("a", "b", "c"), ("a", "d", "e"), ("a", "b", "f")
    votes = {"m1": Q, "m2": Q, "m3": P, "m4": P, "m5": R}
    assert consensus(votes, min_agree=2) == (P, 2, "tie between 2 paths broken")


def test_a_tie_with_nothing_else_voted_goes_to_the_longer_then_the_first_path():
    assert break_tie([A, ("N-1-1", "N-2-1", "N-2-2")], [A, A]) == ("N-1-1", "N-2-1", "N-2-2")
    # equal Jaccard and length: the lexicographically first "A -> B" string
    assert consensus({"m1": B, "m2": B, "m3": A, "m4": A}, min_agree=2) == (
        A,
        2,
        "tie between 2 paths broken",
    )


def modal_frame(rows):
    return pd.DataFrame(
        rows,
        columns=[
            "model",
            "patient_id",
            "modal_path",
            "modal_treatment",
            "self_path_overlap",
            "self_treatment_share",
        ],
    )


def test_a_model_failing_delta_on_a_note_does_not_vote():
    modal = modal_frame(
        [
            # p1: m1 and m2 agree but m2's rollouts disagree on the path (overlap 0.5 < 0.9),
            # so only m1 votes for the path variant; both pass the treatment filter
            ("m1", "p1", "N-1-1 -> N-2-1", "N-2-1", 1.0, 1.0),
            ("m2", "p1", "N-1-1 -> N-2-1", "N-2-1", 0.5, 0.9),
            ("m3", "p1", "N-1-1 -> N-3-1", "N-3-1", 1.0, 0.6),
            # p2: three models agree, one of them fails the treatment filter (0.8 < 0.9)
            ("m1", "p2", "N-1-1 -> N-4-1", "N-4-1", 1.0, 1.0),
            ("m2", "p2", "N-1-1 -> N-4-1", "N-4-1", 1.0, 0.8),
            ("m3", "p2", "N-1-1 -> N-4-1", "N-4-1", 1.0, 1.0),
        ]
    )
    labels = consensus_labels(modal, min_agree=2, delta=0.9).set_index("patient_id")
    assert labels.loc["p1", "path_label"] == ""  # m1 and m3 vote, no two agree
    assert labels.loc["p1", "path_voters"] == 2
    assert labels.loc["p1", "treatment_label"] == "N-1-1 -> N-2-1"  # m1, m2 (m3: 0.6 < 0.9)
    assert labels.loc["p1", "treatment_agreeing"] == 2
    assert labels.loc["p2", "path_label"] == "N-1-1 -> N-4-1"
    assert labels.loc["p2", "path_agreeing"] == 3
    assert labels.loc["p2", "treatment_agreeing"] == 2


def test_the_treatment_variant_still_needs_the_same_full_path():
    # the two models end at the same treatment by different routes: no exact-path consensus
    modal = modal_frame(
        [
            ("m1", "p1", "N-1-1 -> N-2-1 -> N-5-1", "N-5-1", 1.0, 1.0),
            ("m2", "p1", "N-1-1 -> N-3-1 -> N-5-1", "N-5-1", 1.0, 1.0),
        ]
    )
    labels = consensus_labels(modal, min_agree=2, delta=0.9)
    assert labels["treatment_label"].iloc[0] == ""


def test_agreement_features_share_of_other_models():
    modal = modal_frame(
        [
            ("m1", "p1", "N-1-1 -> N-2-1", "N-2-1", 1, 1),
            ("m2", "p1", "N-1-1 -> N-2-1", "N-2-1", 1, 1),
            ("m3", "p1", "N-1-1 -> N-3-1", "N-3-1", 1, 1),
            ("m1", "p2", "N-1-1 -> N-2-1", "N-2-1", 1, 1),
            ("m2", "p2", "N-0-1 -> N-2-1", "N-2-1", 1, 1),
            ("m3", "p2", "", "", 0, 0),
        ]
    )
    feats = agreement_features(modal).set_index(["model", "patient_id"])
    assert feats.loc[("m1", "p1"), "cross_path_agreement"] == 1 / 2
    assert feats.loc[("m3", "p1"), "cross_treatment_agreement"] == 0.0
    assert feats.loc[("m1", "p2"), "cross_treatment_agreement"] == 1 / 2
    assert feats.loc[("m3", "p2"), "cross_treatment_agreement"] == 0.0  # no answer agrees with none


def test_single_model_has_no_agreement_feature():
    modal = modal_frame([("m1", "p1", "N-1-1 -> N-2-1", "N-2-1", 1, 1)])
    assert math.isnan(agreement_features(modal)["cross_path_agreement"].iloc[0])
