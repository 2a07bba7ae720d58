"""Judge-error corrections: hand-computed examples, the support checks, and their coverage."""

import numpy as np
import pytest

from oncoeval.judges.correction import (
    CorrectionSettings,
    Validation,
    corrected_distribution,
    corrected_rate,
    invert_confusion,
    rogan_gladen,
)
from oncoeval.stats.bootstrap import BootstrapSettings

SCORES = (-1, 0, 1)


def _validation(tp, fn, tn, fp):
    truth = [True] * (tp + fn) + [False] * (tn + fp)
    judged = [True] * tp + [False] * fn + [False] * tn + [True] * fp
    return truth, judged


def test_rogan_gladen_by_hand():
    # sensitivity 0.8, specificity 0.9, observed 0.31: (0.31 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.3
    assert rogan_gladen(0.31, 0.8, 0.9) == pytest.approx(0.3)
    # An observed share below the false-positive rate would be negative: clipped to 0.
    assert rogan_gladen(0.05, 0.8, 0.9) == 0.0
    with pytest.raises(ValueError):
        rogan_gladen(0.3, 0.5, 0.5)


def test_corrected_rate_from_validation_counts():
    # 10 positives (8 found), 10 negatives (9 rejected): sensitivity 0.8, specificity 0.9.
    truth, judged = _validation(tp=8, fn=2, tn=9, fp=1)
    evaluated = [True] * 31 + [False] * 69
    result = corrected_rate(evaluated, truth, judged)
    assert result.reason == ""
    assert result.value == pytest.approx(0.3)
    assert result.ci_low < 0.3 < result.ci_high


def test_ci_narrows_as_the_validation_set_grows():
    evaluated = [True] * 31 + [False] * 69
    small = corrected_rate(evaluated, *_validation(8, 2, 9, 1))
    large = corrected_rate(evaluated, *_validation(800, 200, 900, 100))
    assert large.value == pytest.approx(small.value)
    assert (large.ci_high - large.ci_low) < (small.ci_high - small.ci_low)


def test_unsupported_corrections_give_the_reason():
    evaluated = [True] * 30 + [False] * 70
    chance = corrected_rate(evaluated, *_validation(tp=5, fn=5, tn=4, fp=6))
    assert chance.value is None and "sensitivity + specificity <= 1" in chance.cell
    few = corrected_rate(
        evaluated, *_validation(tp=3, fn=0, tn=9, fp=1), correction=CorrectionSettings(5)
    )
    assert few.cell == "fewer than 5 validation labels per class (positive: 3)"
    assert corrected_rate([], *_validation(8, 2, 9, 1)).cell == "no judged items"


def test_invert_confusion_by_hand():
    # Truth (0.5, 0.3, 0.2) over -1/0/1 seen through M gives q = M^T pi = (0.43, 0.38, 0.19).
    m = np.array([[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]])
    pi = invert_confusion([0.43, 0.38, 0.19], m)
    assert pi == pytest.approx([0.5, 0.3, 0.2])
    assert pi @ np.array(SCORES) == pytest.approx(-0.3)  # raw mean score would be -0.24


def test_invert_confusion_stays_on_the_simplex():
    # 0.9 pi0 + 0.2 (1 - pi0) = 0.95 needs pi0 = 1.07: the closest valid shares are (1, 0).
    pi = invert_confusion([0.95, 0.05], [[0.9, 0.1], [0.2, 0.8]])
    assert pi == pytest.approx([1.0, 0.0], abs=1e-6)


def test_corrected_mean_score():
    # Validation: 10 labels per class, judge as in M above.
    truth = [-1] * 10 + [0] * 10 + [1] * 10
    judged = [-1] * 8 + [0] * 2 + [-1] + [0] * 8 + [1] + [0] * 2 + [1] * 8
    evaluated = [-1] * 43 + [0] * 38 + [1] * 19
    pi, pcs = corrected_distribution(
        evaluated, (truth, judged), SCORES, functional=lambda p: p @ np.array(SCORES)
    )
    assert pi == pytest.approx([0.5, 0.3, 0.2])
    assert pcs.value == pytest.approx(-0.3)
    assert pcs.ci_low < -0.3 < pcs.ci_high
    _, short = corrected_distribution(
        evaluated, (truth[:-6], judged[:-6]), SCORES, functional=lambda p: p @ np.array(SCORES)
    )
    assert short.cell == "fewer than 5 validation labels per class (1: 4)"
    singular = [0] * 30  # a judge that always says 0 separates nothing
    _, flat = corrected_distribution(
        evaluated, (truth, singular), SCORES, functional=lambda p: p @ np.array(SCORES)
    )
    assert "singular" in flat.cell


def test_corrected_coverage_near_95_percent_where_raw_is_biased():
    """Simulation: true rate 0.3, judge sensitivity 0.85, specificity 0.8.

    Evaluated items show the judge's inflated rate (0.3*0.85 + 0.7*0.2 = 0.395); the raw
    interval almost never covers 0.3, the corrected one does about 95% of the time.
    """
    rng = np.random.default_rng(1)
    truth_rate, sens, spec = 0.3, 0.85, 0.8
    reps, raw_hits, corrected_hits = 200, 0, 0
    for rep in range(reps):
        truth = rng.random(400) < truth_rate
        judged = np.where(truth, rng.random(400) < sens, rng.random(400) > spec)
        v_truth = rng.random(300) < 0.5
        v_judged = np.where(v_truth, rng.random(300) < sens, rng.random(300) > spec)
        p = judged.mean()
        half = 1.96 * np.sqrt(p * (1 - p) / judged.size)
        raw_hits += p - half <= truth_rate <= p + half
        result = corrected_rate(
            judged, v_truth, v_judged, BootstrapSettings(500, 0.95, rep), CorrectionSettings()
        )
        corrected_hits += result.ci_low <= truth_rate <= result.ci_high
    print(f"coverage raw {raw_hits / reps:.3f}, corrected {corrected_hits / reps:.3f}")
    assert raw_hits / reps < 0.2
    assert 0.90 <= corrected_hits / reps <= 0.99


def _planned_sample():
    # 100 evaluated items: the judge says positive on 60, negative on 40. A review plan labels
    # 10 from each verdict (inclusion probabilities 10/60 and 10/40: weights 6 and 4); humans
    # find 8 of the judge's positives and 2 of its negatives truly positive.
    truth = [True] * 8 + [False] * 2 + [True] * 2 + [False] * 8
    judged = [True] * 10 + [False] * 10
    weights = [6.0] * 10 + [4.0] * 10
    return truth, judged, weights


def test_design_weighted_correction_is_the_stratified_estimate_by_hand():
    truth, judged, weights = _planned_sample()
    evaluated = [True] * 60 + [False] * 40
    weighted = corrected_rate(evaluated, truth, judged, validation_weights=weights)
    # Stratified: 0.6 * 8/10 + 0.4 * 2/10 = 0.56. Through the weighted confusion matrix:
    # sensitivity 48/56, specificity 32/44; (0.6 + 32/44 - 1) / (48/56 + 32/44 - 1) = 0.56.
    assert weighted.value == pytest.approx(0.56)
    assert weighted.ci_low < 0.56 < weighted.ci_high
    # Unweighted, the sample's 50/50 mix of verdicts gives sensitivity = specificity = 0.8 and
    # (0.6 + 0.8 - 1) / 0.6 = 0.667: biased.
    assert corrected_rate(evaluated, truth, judged).value == pytest.approx(2 / 3)


def test_design_weighted_distribution_and_difference_by_hand():
    from oncoeval.judges.correction import corrected_difference

    truth, judged, weights = _planned_sample()
    t = [1 if x else 0 for x in truth]
    j = [1 if x else 0 for x in judged]
    shares, pcr = corrected_distribution(
        [1] * 60 + [0] * 40, Validation(t, j, weights), (0, 1), functional=lambda s: float(s[1])
    )
    assert shares == pytest.approx([0.44, 0.56])
    assert pcr.value == pytest.approx(0.56)
    # A second model judged positive on 30 of 100, corrected with the same sensitivity and
    # specificity (the correction assumes the judge errs alike on both models' answers).
    diff = corrected_difference(
        [1] * 60 + [0] * 40, [1] * 30 + [0] * 70, list(range(100)), Validation(t, j, weights),
        (0, 1), functional=lambda s: float(s[1]),
    )  # fmt: skip
    assert diff["value_a"] == pytest.approx(0.56)
    value_b = (0.3 + 32 / 44 - 1) / (48 / 56 + 32 / 44 - 1)
    assert diff["value_b"] == pytest.approx(value_b)
    assert diff["diff_ci_low"] < 0.56 - value_b < diff["diff_ci_high"]
