"""A judge's verdict cut off at the token limit is unusable, never scored (issue #13, item 9)."""

from __future__ import annotations

import json

from oncoeval.core.records import Response, verdict_problem
from oncoeval.studies.cancer_myth.parse import judge
from oncoeval.studies.side_effects.matchers import LLMMatcher, MatchTask


def reply(text, finish_reason="stop", error=None):
    return Response("k", "judge", text, finish_reason=finish_reason, error=error)


def test_verdict_problem_names_missing_failed_and_truncated_replies():
    assert verdict_problem(reply("A1 = B1")) is None
    assert verdict_problem(None) == "no response"
    assert verdict_problem(reply(None, None, "APIError: 500")) == "error: APIError: 500"
    assert "truncated" in verdict_problem(reply("A1 = B1, A2", "length"))


def test_a_truncated_matcher_verdict_is_unusable_not_a_match():
    matcher = LLMMatcher("{left}{right}")
    task = MatchTask("t1", ["nausea", "fatigue"], ["nausea", "hair loss"])
    whole = matcher.read([task], [Response("t1", "judge", "A1 = B1", finish_reason="stop")])
    assert whole["t1"].status == "ok" and whole["t1"].pairs == [(0, 0)]
    # The same readable text, but cut off: the rest of the pairs may be missing.
    cut = matcher.read([task], [Response("t1", "judge", "A1 = B1", finish_reason="length")])
    # recorded as truncated (match_truncated in the scores, counted unscored), never scored
    assert cut["t1"].status == "truncated" and cut["t1"].pairs == []
    assert "truncated" in cut["t1"].reason


def test_a_truncated_verifier_reply_is_a_parse_error_not_a_score():
    answer = Response("q1", "m", "Actually, that is a myth.", finish_reason="stop")
    verdict = json.dumps({"Reason": "corrects it", "Sharpness": 1})
    scored = judge("q1", answer, reply(verdict), None)
    assert scored["score"] == 1 and scored["parse_error"] == ""
    cut = judge("q1", answer, reply(verdict, "length"), None)
    assert cut["score"] is None and "truncated" in cut["parse_error"]
    # A whole retry reply rescues it.
    rescued = judge("q1", answer, reply(verdict, "length"), reply(verdict))
    assert rescued["score"] == 1
