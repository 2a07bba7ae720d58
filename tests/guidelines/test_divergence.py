"""Error analysis: divergence points and the share of label errors flagged by rollouts."""

import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines.divergence import analyse, divergence

A = ("N-1-1", "N-1-2", "N-2-1")
B = ("N-1-1", "N-1-2", "N-3-1")
C = ("N-1-1", "N-1-3")


def test_divergence_point_is_last_shared_node_and_the_two_next_nodes():
    assert divergence(A, B) == ("N-1-2", "N-2-1", "N-3-1")
    assert divergence(A, C) == ("N-1-1", "N-1-2", "N-1-3")
    assert divergence(A, A[:2]) == ("N-1-2", "N-2-1", "END")
    assert divergence(("X-1-1",), A) == ("START", "X-1-1", "N-1-1")
    assert divergence(A, A) is None
    assert divergence(A, None)[0] == "NO_ANSWER"


def test_share_of_label_errors_at_top_rollout_divergences():
    # rollouts part from the mode at N-1-2 twice (p1, p2) and at N-1-1 once (p3)
    paths = {"p1": [A, B, A], "p2": [A, B], "p3": [A, C], "p4": [A]}
    modal = {"p1": A, "p2": A, "p3": A, "p4": A}
    # label errors: p2 leaves the label at N-1-2 (flagged with top-1), p4 at N-1-1 (not flagged)
    labels = {"p1": A, "p2": B, "p3": A, "p4": C}
    summary, long, flagged = analyse(
        "m", paths, modal, labels, 1, BootstrapSettings(n_resamples=100)
    )
    assert summary["top1_rollout_points"] == "N-1-2"
    assert (summary["n_label_errors"], summary["n_flagged"], summary["share_flagged"]) == (
        2,
        1,
        0.5,
    )
    assert sorted(flagged) == [("p2", 1.0), ("p4", 0.0)]  # (patient, flagged) per label error
    assert {"source": "rollouts", "decision_node": "N-1-2", "count": 2}.items() <= long[0].items()
    summary2, _, _ = analyse("m", paths, modal, labels, 2, BootstrapSettings(n_resamples=100))
    assert summary2["share_flagged"] == 1.0


def test_divergence_pairs_of_rollouts_and_of_the_modal_path_against_the_label():
    from oncoeval.studies.guidelines.divergence import label_pairs, rollout_pairs

    rollouts = {
        "p1": [A, B, A],  # part after N-1-2: N-2-1 | N-3-1
        "p2": [A, B, C, None],  # part after N-1-1: N-1-2 | N-1-3 (A and B share N-1-2)
        "p3": [A, A[:2]],  # one stops at N-1-2: N-2-1 | N-1-2-end
        "p4": [A, A, A],  # no divergence
    }
    assert rollout_pairs(rollouts) == {
        ("N-2-1", "N-3-1"): 1,
        ("N-1-2", "N-1-3"): 1,
        ("N-1-2-end", "N-2-1"): 1,
    }
    modal = {"p1": A, "p2": C, "p3": A}
    labels = {"p1": B, "p2": A, "p3": A}
    assert label_pairs(modal, labels) == {("N-2-1", "N-3-1"): 1, ("N-1-2", "N-1-3"): 1}


def test_divergence_pair_correlation_by_hand():
    from collections import Counter

    from oncoeval.studies.guidelines.divergence import pair_agreement

    q1, q2, q3, q4, q5 = (("a", f"b{i}") for i in range(1, 6))
    rollouts = Counter({q1: 4, q2: 2, q3: 3, q4: 1})
    labels = Counter({q1: 3, q2: 1, q3: 3, q5: 1})
    # gamma 1 keeps pairs seen more than once in either: q1 (4, 3), q2 (2, 1), q3 (3, 3)
    # x = 4 2 3, y = 3 1 3: Sxy = 2, Sxx = 2, Syy = 8/3, Pearson r = 2 / sqrt(16/3) = sqrt(3)/2
    # ranks x 3 1 2, y 2.5 1 2.5: Spearman = 1.5 / sqrt(2 * 1.5) = sqrt(3)/2
    # R² of x as the prediction of y: 1 - (1 + 1 + 0) / (8/3) = 0.25
    summary, rows = pair_agreement(rollouts, labels, gamma=1)
    assert (summary["n_pairs"], summary["n_kept"]) == (5, 3)
    assert summary["pearson"] == pytest.approx(3**0.5 / 2)
    assert summary["spearman"] == pytest.approx(3**0.5 / 2)
    assert summary["r2"] == pytest.approx(0.25)
    assert [r["kept"] for r in rows] == [True, True, True, False, False]
    # the public code's own default (gamma 4) keeps nothing here: no correlation, said so
    none, _ = pair_agreement(rollouts, labels, gamma=4)
    assert none["n_kept"] == 0 and "needs >= 3 pairs" in none["note"]
