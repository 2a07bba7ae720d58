"""Scoring by hand, the control distribution's percentile, the share flagged and the verdict."""

import math
import re

import numpy as np
import pandas as pd

from oncoeval.core.records import Request, Response
from oncoeval.exposure import audit, scoring


def test_rouge_l_and_longest_run_by_hand():
    truth = "the cat sat on the mat"
    # LCS "the cat sat on mat" = 5 of 6 tokens each side: P = R = F1 = 5/6
    assert math.isclose(scoring.rouge_l("the cat sat on a mat", truth), 5 / 6)
    # "the cat sat" is the longest shared run: 3 of the truth's 6 tokens
    assert scoring.longest_run("x the cat sat", truth) == 0.5
    assert scoring.rouge_l("", truth) == 0.0


def test_slot_match_normalises_the_answer():
    assert scoring.slot_match(' "Gleason".\nbecause', "Gleason") == 1.0
    assert scoring.slot_match("Gleason score", "Gleason") == 0.0


def test_control_threshold_is_the_finite_sample_95th_percentile():
    # 21 controls 0..20: the ceil(0.95 * 22) = 21st smallest, their largest
    assert audit.control_threshold(list(range(21))) == 20.0
    # 40 controls: the ceil(0.95 * 41) = 39th smallest, i.e. 38; NaNs are not controls
    assert audit.control_threshold([*range(40), np.nan]) == 38.0
    # 18 controls: none is high enough
    assert np.isnan(audit.control_threshold(list(range(18))))


def _row(score, control):
    return {"item_id": "i", "probe": "completion", "score": score, "control_score": control}


def test_share_flagged_with_wilson_interval_and_verdict():
    # controls 0.00..0.19 (20 items): the 20th smallest, 0.19; items 0.5 for 8 of them, 0.1 for 12
    rows = pd.DataFrame(
        [_row(0.5 if i < 8 else 0.1, i / 100) for i in range(20)], columns=audit.ITEM_COLUMNS
    )
    out = audit.summarise("m", "completion", rows)
    assert out["control_p95"] == 0.19
    assert out["flagged"] == 8 and out["share_flagged"] == 0.4
    # Wilson, k=8, n=20, z=1.96: (0.4 + z²/40 ∓ z·sqrt(0.4·0.6/20 + z²/1600)) / (1 + z²/20)
    z = 1.959963984540054
    centre, half = 0.4 + z**2 / 40, z * math.sqrt(0.24 / 20 + z**2 / 1600)
    assert math.isclose(out["share_flagged_ci_low"], (centre - half) / (1 + z**2 / 20))
    assert out["verdict"] == "exposed"


def test_no_evidence_and_not_testable():
    # items 0.00, 0.05, ..., 1.00 against controls 0.00..0.19 and 0.30
    same = pd.DataFrame(
        [_row(i / 20, i / 100 if i < 20 else 0.3) for i in range(21)], columns=audit.ITEM_COLUMNS
    )
    out = audit.summarise("m", "completion", same)
    # threshold: the 21st smallest control (0.3); items above it: 0.35..1.0 = 14 of 21
    assert out["control_p95"] == 0.3 and out["flagged"] == 14 and out["verdict"] == "exposed"
    equal = pd.DataFrame([_row(i / 20, i / 20) for i in range(20)], columns=audit.ITEM_COLUMNS)
    out = audit.summarise("m", "completion", equal)
    assert out["flagged"] == 0 and out["verdict"] == "no evidence"
    few = pd.DataFrame([_row(1.0, 0.0)] * 18, columns=audit.ITEM_COLUMNS)
    out = audit.summarise("m", "completion", few)
    assert out["verdict"] == "not testable" and "needs 19" in out["reason"]


def test_item_rows_pair_each_item_with_its_control_and_leave_failures_nan():
    def req(rid, control, truth):
        meta = {"item_id": "q1", "probe": "slot", "control": control, "truth": truth}
        return Request(rid, [], {}, meta)

    requests = [req("q1", False, "Gleason"), req("q1~control", True, "surgery")]
    responses = {
        "q1": Response("q1", "m", "gleason"),
        "q1~control": Response("q1~control", "m", None, error="timeout"),
    }
    rows = audit.item_rows("slot", requests, responses)
    assert rows["score"].tolist() == [1.0] and np.isnan(rows["control_score"].iloc[0])


def test_table_says_why_a_probe_was_not_run_for_a_model():
    rows = pd.DataFrame([_row(0.1, 0.1)] * 6, columns=audit.ITEM_COLUMNS)
    reason = "not testable: log-probabilities of a given text not available from the openai backend"
    table = audit.exposure_table(
        {"m": rows}, ["completion", "likelihood"], {"m": {"likelihood": reason}}
    )
    assert table["probe"].tolist() == ["completion", "likelihood"]
    last = table.iloc[-1]
    assert last["verdict"] == "not testable" and last["reason"] == reason and last["n"] == 0


def test_min_k_prob_by_hand():
    # 10 tokens: the lowest 20% are the 2 lowest, -5 and -4: mean -4.5
    logprobs = [-0.1, -5.0, -0.2, -4.0, -0.3, -1.0, -0.5, -0.1, -2.0, -0.4]
    assert scoring.min_k_prob(logprobs) == -4.5
    # 3 tokens: 20% rounds down to none, so the single lowest
    assert scoring.min_k_prob([-1.0, -3.0, -2.0]) == -3.0
    assert scoring.score("likelihood", logprobs, "")["score"] == -4.5


def test_likelihood_rows_read_the_token_logprobs_not_the_text():
    requests = [
        Request(rid, [{"role": "user", "content": "t"}], {}, {"item_id": "a", "control": c, "truth": ""})
        for rid, c in (("a", False), ("a~control", True))
    ]  # fmt: skip
    responses = {
        "a": Response("a", "m", "", token_logprobs=[-1.0, -2.0, -3.0, -0.5, -0.5]),
        # a reply without log-probabilities (a backend that gave text only) is not scored
        "a~control": Response("a~control", "m", "some text"),
    }
    rows = audit.item_rows("likelihood", requests, responses)
    assert rows["score"].tolist() == [-3.0] and np.isnan(rows["control_score"].iloc[0])


def test_the_tables_caption_names_method_unit_cluster_and_n(tmp_path):
    # what tests/test_default_run.py asks of every interval table of the demo, which now has one
    from oncoeval.exposure import stages

    rows = pd.DataFrame([_row(0.1, 0.1)] * 20, columns=audit.ITEM_COLUMNS)
    rows.to_csv(tmp_path / "m.tsv", sep="\t", index=False)
    out = [tmp_path / n for n in ("exposure.tsv", "exposure.md", "exposure.png")]
    reason = "log-probabilities of a given text not available from the openai backend"
    stages.exposure_table(
        [tmp_path / "m.tsv"], ["m"], ["completion", "likelihood"], {"m": {"likelihood": reason}},
        *out,
    )  # fmt: skip
    caption = out[1].read_text()
    assert "Intervals (95%): Wilson score interval" in caption
    assert re.search(r"\bunit\b", caption, re.IGNORECASE) and "cluster" in caption
    assert re.search(r"\bn(_\w+)?: ", caption) and reason in caption
