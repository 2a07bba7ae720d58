"""Path overlap (Appendix B), treatment match (Appendix C) and self-consistency, by hand."""

import math

from oncoeval.studies.guidelines.metrics import (
    against_label,
    modal_path,
    modal_treatment,
    path_overlap,
    treatment_match,
    treatment_share,
)

A = ("N-1-1", "N-1-2", "N-2-1")
B = ("N-1-1", "N-1-2", "N-3-1", "N-3-2")
C = ("N-1-1", "N-1-3")


def test_jaccard_of_two_paths():
    # shared {N-1-1, N-1-2}; union 5 nodes
    assert path_overlap([A, B]) == 2 / 5


def test_k_way_overlap_is_intersection_over_union_of_all():
    # intersection {N-1-1}; union {1-1, 1-2, 2-1, 3-1, 3-2, 1-3} = 6
    assert path_overlap([A, B, C]) == 1 / 6
    assert path_overlap([A, A, A]) == 1.0


def test_empty_or_unparseable_prediction_scores_zero_never_one():
    assert path_overlap([(), A]) == 0.0
    assert path_overlap([None, A]) == 0.0
    assert path_overlap([None, None]) == 0.0
    assert path_overlap([(), ()]) == 1.0  # Appendix B: empty union
    assert treatment_match((), A) == 0.0
    assert treatment_match(None, A) == 0.0


def test_treatment_match_compares_final_nodes_only():
    assert treatment_match(("X-1-1", "N-2-1"), A) == 1.0
    assert treatment_match(B, A) == 0.0


def test_treatment_share_is_modal_count_over_k():
    # finals: N-2-1, N-2-1, N-3-2, unparseable -> 2 / 4
    assert treatment_share([A, A, B, None]) == 0.5
    assert treatment_share([None, None]) == 0.0
    assert math.isnan(treatment_share([]))


def test_modal_path_and_treatment_break_ties_by_first_rollout():
    assert modal_path([B, A, A, B, C]) == B
    assert modal_treatment([C, A, B]) == "N-1-3"
    assert modal_path([None, None]) is None


def test_mean_over_rollouts_against_a_label():
    got = against_label([A, B, None], A)
    assert got["path_overlap"] == (1 + 2 / 5 + 0) / 3
    assert got["treatment_match"] == 1 / 3
