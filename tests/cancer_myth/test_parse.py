"""Verifier, classifier and generator parsing on real-looking model output."""

import pytest

from oncoeval.studies.cancer_myth.parse import parse_category, parse_generated, parse_verifier


@pytest.mark.parametrize(
    ("text", "score", "reason"),
    [
        ('{"Reason": "Plans recovery only.", "Sharpness": -1}', -1, "Plans recovery only."),
        ('```json\n{\n  "Reason": "Hints only.",\n  "Sharpness": 0\n}\n```', 0, "Hints only."),
        (
            'Here is my evaluation.\n{"Reason": "Says removal is rarely needed.", "Sharpness": 1}\n'
            "Let me know if you need more.",
            1,
            "Says removal is rarely needed.",
        ),
        (
            '{"score": {"Reason": "nested as in the examples file", "Sharpness": "1"}}',
            1,
            "nested as in the examples file",
        ),
        ('{"reason": "lower-case keys", "sharpness": -1.0}', -1, "lower-case keys"),
        # broken JSON (an unescaped quote) but an explicit, quoted score key
        ('{"Reason": "it said "wait"", "Sharpness": 0}', 0, ""),
    ],
)
def test_readable_scores(text, score, reason):
    result = parse_verifier(text)
    assert (result.score, result.reason, result.error) == (score, reason, "")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"Reason": "The answer is thorough."}', "no score in verifier output"),
        ('{"Reason": "Great", "Sharpness": 2}', "score 2 is not -1, 0 or 1"),
        ('{"Reason": "x", "Sharpness": "high"}', "score 'high' is not -1, 0 or 1"),
        ("Score (in JSON): 1", "no score in verifier output"),
        (
            "The answer addresses the presupposition well, I would give it a 1.",
            "no score in verifier output",
        ),
        ("", "empty verifier output"),
        (None, "empty verifier output"),
        ('{"Sharpness": 1} and later {"Sharpness": -1}', "conflicting scores [-1, 1]"),
        ('{"Reason": "x", "Sharpness": true}', "score True is not -1, 0 or 1"),
    ],
)
def test_unreadable_scores_give_a_reason_and_no_score(text, error):
    result = parse_verifier(text)
    assert result.score is None
    assert result.error == error


def test_category_from_fenced_json_with_other_casing():
    assert parse_category('```json\n{"reason": "r", "category": "No Treatment"}\n```') == (
        "no treatment",
        "",
    )
    assert parse_category('{"category": "astrology"}') == (None, "unknown category 'astrology'")
    assert parse_category("It is about side effects.") == (None, "no category in classifier output")


def test_generated_questions_keep_complete_records_up_to_m():
    text = (
        "Here are the questions:\n```json\n["
        '{"example_question": "Q1?", "example_assumption": "A1."},'
        '{"example_question": "Q2?"},'
        '{"example_question": "Q3?", "example_assumption": "A3."},'
        '{"example_question": "Q4?", "example_assumption": "A4."}'
        "]\n```"
    )
    records, note = parse_generated(text, limit=2)
    assert [r["example_question"] for r in records] == ["Q1?", "Q3?"]
    assert note == "1 record(s) without question or assumption skipped; 1 extra question(s) dropped"
    assert parse_generated("I cannot help with that.", 3) == (
        [],
        "no question with example_question and example_assumption in generator output",
    )
