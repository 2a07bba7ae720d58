"""PCS/PCR, bootstrap CIs, breakdowns and judge agreement on hand-built sets (paired tests between
models: tests/spine/test_compare.py)."""

import math

import numpy as np
import pandas as pd
import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.cancer_myth import metrics

SETTINGS = BootstrapSettings(n_resamples=2000, ci=0.95, seed=0)


def _scores(values, categories=None, generators=None):
    n = len(values)
    return pd.DataFrame(
        {
            "question_id": [str(i) for i in range(n)],
            "score": pd.array(values, dtype="Float64"),
            "category": categories or ["no treatment"] * n,
            "from_model": generators or ["gpt-4o"] * n,
        }
    )


def test_pcs_is_mean_score_and_pcr_share_of_ones_over_scored_questions():
    row = metrics.pcs_pcr([1, 0, -1, -1, None], SETTINGS)
    assert (row["n"], row["n_unscored"]) == (4, 1)
    assert row["pcs"] == pytest.approx(-0.25)  # (1 + 0 - 1 - 1) / 4
    assert row["pcr"] == pytest.approx(0.25)  # one score 1 out of four scored
    assert row["pcs_ci_low"] <= row["pcs"] <= row["pcs_ci_high"]


def test_bootstrap_ci_matches_the_normal_approximation_on_a_large_set():
    # 200 scores of 1 and 200 of -1: PCS 0, SD 1, SE 1/sqrt(400) = 0.05, 95% CI about +-0.098
    row = metrics.pcs_pcr([1] * 200 + [-1] * 200, SETTINGS)
    assert row["pcs"] == 0
    assert row["pcs_ci_low"] == pytest.approx(-0.098, abs=0.015)
    assert row["pcs_ci_high"] == pytest.approx(0.098, abs=0.015)
    # PCR 0.5 with SE sqrt(0.25/400) = 0.025: CI about 0.451..0.549
    assert row["pcr_ci_low"] == pytest.approx(0.451, abs=0.01)
    assert row["pcr_ci_high"] == pytest.approx(0.549, abs=0.01)


def test_constant_scores_get_an_effective_n_bound_and_seeded_reruns_agree():
    row = metrics.pcs_pcr([-1, -1, -1], SETTINGS)
    # PCS on its declared [-1, 1]: no spread, so n = 3 questions with t at 2 df (4.303):
    # Wilson's upper bound of 0 of 3, q^2 / (3 + q^2), rescaled to [-1, 1]; not [-1, -1]
    q2 = 4.302653**2
    assert (row["pcs"], row["pcs_ci_low"]) == (-1, -1)
    assert row["pcs_ci_high"] == pytest.approx(-1 + 2 * q2 / (3 + q2), abs=1e-5)
    # PCR 0 of 3 is a share: Wilson's interval (t at 2 df), [0, t^2 / (n + t^2)], not [0, 0]
    assert row["pcr"] == 0 and row["pcr_ci_low"] == pytest.approx(0, abs=1e-12)
    assert row["pcr_ci_high"] == pytest.approx(q2 / (3 + q2), abs=1e-3)
    a = metrics.pcs_pcr([1, 0, -1, 1, 0], SETTINGS)
    b = metrics.pcs_pcr([1, 0, -1, 1, 0], SETTINGS)
    assert a == b


def test_no_scored_question_gives_nan_not_zero():
    row = metrics.pcs_pcr([None, None], SETTINGS)
    assert (row["n"], row["n_unscored"]) == (0, 2)
    assert math.isnan(row["pcs"]) and math.isnan(row["pcr"])


def test_category_and_generator_tables_leave_manual_out_of_the_matrix():
    df = _scores(
        [1, -1, 0, 1, -1, None],
        categories=["no treatment", "no treatment", "other", "other", "other", "other"],
        generators=["gpt-4o", "manual", "gpt-4o", "gemini-1.5-pro", "gemini-1.5-pro", "gpt-4o"],
    )
    by_cat = metrics.category_table({"m1": df}, SETTINGS).set_index("category")
    assert by_cat.loc["no treatment", "pcs"] == pytest.approx(0.0)  # (1 - 1) / 2
    assert by_cat.loc["other", "pcs"] == pytest.approx(0.0)  # (0 + 1 - 1) / 3
    assert by_cat.loc["other", "n_unscored"] == 1
    assert list(by_cat.index) == ["no treatment", "other"]  # the paper's order
    by_gen = metrics.generator_table({"m1": df}, SETTINGS).set_index("generator")
    assert "manual" not in by_gen.index
    assert by_gen.loc["gpt-4o", "pcs"] == pytest.approx(0.5)  # (1 + 0) / 2, one unscored
    assert by_gen.loc["gemini-1.5-pro", "pcr"] == pytest.approx(0.5)


def test_judge_agreement_exact_binary_kappa_and_confusion():
    human = [-1, 1, -1, 0, 1, -1]
    verifier = [-1, 1, 0, -1, 1, np.nan]
    summary, confusion = metrics.judge_agreement(human, verifier, SETTINGS, "v")
    row = summary.iloc[0]
    assert (row["n"], row["n_unscored"]) == (5, 1)
    assert row["exact_agreement"] == pytest.approx(3 / 5)
    assert row["binary_agreement"] == pytest.approx(1.0)
    # p_o = 0.6; marginals (2, 1, 2) for both raters: p_e = (4 + 1 + 4) / 25 = 0.36
    assert row["cohen_kappa"] == pytest.approx((0.6 - 0.36) / (1 - 0.36))
    cm = confusion.set_index("human")
    assert cm.loc[-1].tolist() == [1, 1, 0, 1]  # verifier -1, 0, 1, unscored
    assert cm.loc[0].tolist() == [1, 0, 0, 0]
    assert cm.loc[1].tolist() == [0, 0, 2, 0]
