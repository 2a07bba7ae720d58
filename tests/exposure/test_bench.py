"""`python -m bench exposure`, sized down: the positive control is told apart and flagged, the
negative one is not; the AUROC's interval keeps its width at the boundary."""

import math

import pytest

from bench.bench_exposure import auroc_ci, controls, demo_items


def test_memorised_half_is_told_apart_and_flagged_unseen_items_are_not():
    result = controls(demo_items(), seeds=range(2))
    completion = result["completion"]
    auc, low, high = completion["positive_auroc_first"]
    assert auc >= 0.80 and completion["positive_auroc_min"] >= 0.80
    assert low < high and low <= auc <= high
    assert completion["positive_share_exposed"] == 1.0
    assert completion["negative_n"] == 2 * 21
    assert completion["negative_share_flagged"] <= 0.05
    assert completion["negative_share_no_evidence"] == 1.0
    assert result["slot"]["positive_auroc_mean"] >= 0.80
    assert result["slot"]["negative_share_no_evidence"] == 1.0


def test_auroc_interval_is_newcombes_score_interval_with_width_at_one():
    # 10 memorised, 11 unseen items, perfectly told apart: the interval still has width
    low, high = auroc_ci(1.0, 10, 11)
    assert high == 1.0 and 0.75 < low < 0.85
    # each end solves Newcombe's score equation: (A - t)^2 = z^2 V(t), V the Hanley-McNeil
    # variance at t with n* = (10 + 11) / 2
    z2, m = 1.959963984540054**2, 10.5 - 1
    for a in (1.0, 0.9):
        for t in auroc_ci(a, 10, 11):
            if t == 1.0:
                continue
            v = t * (1 - t) * (1 + m * (1 - t) / (2 - t) + m * t / (1 + t)) / 110
            assert math.isclose((a - t) ** 2, z2 * v, rel_tol=1e-6)
    # it mirrors: AUROC a and 1 - a have mirrored intervals
    assert auroc_ci(0.3, 10, 11) == pytest.approx([1 - x for x in auroc_ci(0.7, 10, 11)][::-1])
