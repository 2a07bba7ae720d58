"""Error analysis: divergence points and the share of label errors flagged by rollouts."""

from oncoeval.stats import BootstrapSettings
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
    assert sorted(flagged) == [0.0, 1.0]
    assert {"source": "rollouts", "decision_node": "N-1-2", "count": 2}.items() <= long[0].items()
    summary2, _, _ = analyse("m", paths, modal, labels, 2, BootstrapSettings(n_resamples=100))
    assert summary2["share_flagged"] == 1.0
