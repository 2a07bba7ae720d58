"""Model text cannot crash or stall a parser (issue #13, item 3).

Every parser of model output turns any string into a value or a recorded failure: fuzzed with
hypothesis (random text and random mixtures of the tokens each parser reacts to), fed the inputs
that once crashed or stalled them, and timed at the length cap (oncoeval.core.parsing.MAX_ANSWER_CHARS)
on the patterns that make a naive parser quadratic or recursive. Longer texts are a ``too_long``
failure, not read.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oncoeval.core.parsing import MAX_ANSWER_CHARS, MAX_JSON_DEPTH, TOO_LONG, bracket_spans
from oncoeval.core.shapes import text_problem
from oncoeval.studies.cancer_myth.parse import parse_category, parse_generated, parse_verifier
from oncoeval.studies.coral.parse import _tuple_like, allowed_tuples, parse_response
from oncoeval.studies.guidelines.parse import parse_answer, parse_label, strip_reasoning
from oncoeval.studies.guidelines.synthetic import parse_choice
from oncoeval.studies.side_effects.matchers import LLMMatcher
from oncoeval.studies.side_effects.parse import parse_list

CORAL_TUPLES = allowed_tuples("symptoms_at_diagnosis")


def _coral_failure(result):
    return " ".join(f.reason for f in result.failures) if not result.tuples else ""


# name -> (parse one text, the failure it recorded or "" when it read a value)
PARSERS = {
    "cancer_myth.verifier": (parse_verifier, lambda r: r.error),
    "cancer_myth.category": (parse_category, lambda r: r[1]),
    "cancer_myth.generated": (lambda t: parse_generated(t, 3), lambda r: r[1] if not r[0] else ""),
    "coral.tuples": (lambda t: parse_response(t, CORAL_TUPLES), _coral_failure),
    "guidelines.path": (parse_answer, lambda r: r.reason or ""),
    "guidelines.label": (parse_label, lambda r: r.reason or ""),
    "guidelines.choice": (parse_choice, lambda r: "" if r else "no choice"),
    "side_effects.list": (parse_list, lambda r: r.reason if r.status == "error" else ""),
    "side_effects.matcher": (
        lambda t: LLMMatcher.parse(t, 5, 5),
        lambda r: r.reason if r.status != "ok" else "",
    ),
    # a structured judge's reply checked against its shape (oncoeval.core.shapes)
    "shapes": (
        lambda t: text_problem({"json_schema": {"type": "object"}}, t),
        lambda r: r,
    ),
}

# Tokens the parsers react to: brackets, quotes, fences, reasoning tags, tuple names and keys,
# node ids and arrows, judge pairs, bullets. Random mixtures of them reach deep into each parser.
TOKENS = [
    "{", "}", "[", "]", "(", ")", '"', "'", "\\", ":", ",", "=", " ", "\n", "\t", "```", "```json",
    "<think>", "</think>", "<THINKING>", "</reasoning>", "SymptomEnt(", "CancerDiagnosis(",
    "Symptom=", "Datetime=", "RadTest(", "'a'+", "{01/01/2020}", "X(y=", '"score"', '"Sharpness"',
    '"reason"', '"category"', '"example_question"', '"example_assumption"', "-1", "0", "1", "2.0",
    '"final_path"', "final_path:", "NSCL-1-1", "NSCL-2-3", " -> ", "→", ">", "NOT_GUIDELINE_COMPLIANT",
    "choice", "A", "B", "Path A", "A1 = B2", "A3 -> B1", "NONE", "none", "- ", "• ", "1. ", "**",
    "fatigue", "é", "\u2028", "\x00",
]  # fmt: skip
texts = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(TOKENS), max_size=120).map("".join),
)


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(
    max_examples=100,
    deadline=None,
    database=None,  # each run draws afresh; no example database to keep
    suppress_health_check=[HealthCheck.too_slow],
)
@given(text=texts)
def test_any_text_gives_a_value_or_a_recorded_failure(name, text):
    parse, failure = PARSERS[name]
    result = parse(text)
    assert isinstance(failure(result), str)


# Prose that cannot itself hold JSON, a fence or a reasoning tag.
prose = st.text(alphabet=st.characters(blacklist_characters="{}[]`<>"), max_size=300)


@settings(max_examples=100, deadline=None, database=None)
@given(before=prose, after=prose, score=st.sampled_from([-1, 0, 1]))
def test_a_verifier_score_is_read_from_any_prose_around_it(before, after, score):
    text = before + json.dumps({"reason": "r", "score": score}) + after
    assert parse_verifier(text).score == score


@settings(max_examples=100, deadline=None, database=None)
@given(before=prose, after=prose, n=st.integers(1, 6))
def test_a_guideline_path_is_read_from_any_prose_around_it(before, after, n):
    path = [f"LUNG-{i}-1" for i in range(1, n + 1)]
    text = before + json.dumps({"final_path": " -> ".join(path)}) + after
    assert parse_answer(text).path == tuple(path)


# Inputs that crashed (RecursionError) or stalled (quadratic regexes) the parsers before #13.
KNOWN_BAD = [
    "[" * 1000,
    '{"score": ' * 1000,
    "SymptomEnt(Symptom=" + "+".join(["'a'"] * 7000) + ")",
    "A(" * 20_000,
    "SymptomEnt(Symptom=" + "[" * 5000 + "]" * 5000 + ")",
    "<think>" * 20_000,
]


# Hostile texts of issue #24: integers past Python's 4,300-digit limit (a looping model writes
# them; int() raises ValueError, not JSONDecodeError) in every place a parser decodes JSON or
# literals, lone surrogates (valid JSON escapes, and raw), NUL, nesting deeper than the stack, and
# texts over the length cap.
BIG = "9" * 5000
HOSTILE = {
    "long int in an object": '{"score": ' + BIG + ', "reason": "r", "category": "x"}',
    "long int in a list": "[" + BIG + "]",
    "long int in a fence": '```json\n{"final_path": ' + BIG + "}\n```",
    "long int in a path object": '{"final_path": "A-1-1", "n": ' + BIG + "}",
    "long int in a question list": '[{"example_question": "Q?", "example_assumption": '
    + BIG
    + "}]",
    "long exponent": '{"score": 1e' + BIG + "}",
    "long int in a tuple": "SymptomEnt(Symptom=" + BIG + ", Datetime='2020')",
    "long int in prose": "score: " + BIG + "\n- " + BIG + "\nA1 = B" + BIG,
    "surrogate escapes": '{"score": 1, "reason": "\\ud800", "category": "\\udfff"}',
    "raw surrogates": '{"score": 1, "reason": "\ud800"}\n- \udfff\nSymptomEnt(Symptom=\'\ud800\')',
    "NUL": '{"score": 1, "reason": "a\x00b"}\x00SymptomEnt(Symptom=\'\x00\')\n- \x00',
    "NUL escape": '{"score": 0, "reason": "\\u0000", "final_path": "\\u0000"}',
    "deep list": "[" * 100_000 + "]" * 100_000,
    "deep object": '{"a":' * 30_000 + "1" + "}" * 30_000,
    "deep fence": "```json\n" + "[" * 50_000 + "]" * 50_000 + "\n```",
    "deep parentheses": "SymptomEnt(Symptom=" + "(" * 50_000 + ")" * 50_000 + ")",
    "NaN and Infinity": '{"score": NaN, "final_path": Infinity, "category": -Infinity}',
    "300k characters": "x" * 300_000,
    "300k inside JSON": '{"score": 1, "reason": "' + "y" * 300_000 + '"}',
}


@pytest.mark.parametrize("name", sorted(PARSERS))
@pytest.mark.parametrize("label", sorted(HOSTILE))
def test_hostile_text_gives_a_value_or_a_recorded_failure_within_a_second(name, label):
    parse, failure = PARSERS[name]
    start = time.process_time()
    assert isinstance(failure(parse(HOSTILE[label])), str)
    assert time.process_time() - start < 1.0


def test_long_integers_are_recorded_failures_not_crashes():
    """Hand-checked outcomes: the texts that raised ValueError out of two studies' parsers."""
    verdict = parse_verifier('{"score": ' + BIG + ', "reason": "loops"}')
    assert verdict.score is None and verdict.error.endswith("is not -1, 0 or 1")
    assert parse_category('{"category": ' + BIG + "}") == (None, "no category in classifier output")
    assert parse_generated("[" + BIG + "]", 3)[0] == []
    # the JSON cannot be decoded; its final_path line is still read as text
    got = parse_answer('{"final_path": "A-1-1", "n": ' + BIG + "}")
    assert got.path == ("A-1-1",) and got.method == "text"
    # a valid answer beside the broken span is still read
    assert parse_verifier("[" + BIG + '] {"score": 1, "reason": "ok"}').score == 1
    assert text_problem({"json_schema": {"type": "object"}}, "[" + BIG + "]").startswith("not JSON")


@pytest.mark.parametrize("name", sorted(PARSERS))
@pytest.mark.parametrize("text", KNOWN_BAD, ids=lambda t: repr(t[:12]))
def test_inputs_that_once_crashed_are_read_quickly(name, text):
    parse, failure = PARSERS[name]
    start = time.process_time()
    assert isinstance(failure(parse(text)), str)
    assert time.process_time() - start < 1.0


# Patterns filled to the cap: runs that make a backtracking regex rescan (letters, blanks,
# openers without closers, tuple names without ")"), nesting, and many small failed candidates.
AT_CAP = [
    "x",
    " ",
    "\n",
    "[",
    "{",
    "{ ",
    '{"a":',
    "[]",
    "```",
    "A(",
    "SymptomEnt(",
    "SymptomEnt(Symptom=",
    "<think>",
    "NSCL-1-",
    "NSCL-1-1 -> ",
    '"final_path": ',
    "A1 = ",
    "- a\n",
]


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_input_up_to_the_cap_parses_within_a_second(name):
    parse, failure = PARSERS[name]
    slowest = (0.0, "")
    for unit in AT_CAP:
        text = (unit * (MAX_ANSWER_CHARS // len(unit) + 1))[:MAX_ANSWER_CHARS]
        start = time.process_time()
        assert isinstance(failure(parse(text)), str)
        slowest = max(slowest, (time.process_time() - start, unit))
    assert slowest[0] < 1.0, f"{name} took {slowest[0]:.2f} s on {slowest[1]!r} x cap"


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_text_over_the_cap_is_a_too_long_failure(name):
    parse, failure = PARSERS[name]
    # a valid answer for every parser, padded past the cap: it is not read
    answer = (
        '{"score": 1, "category": "x", "final_path": "A-1-1", "choice": "A"}\n'
        "SymptomEnt(Symptom='cough', Datetime='2020')\n- fatigue\nA1 = B1\n"
    )
    text = answer + " " * MAX_ANSWER_CHARS
    reason = failure(parse(text))
    if name == "guidelines.label":  # an expert's label, not model output: read whatever its size
        return
    if name == "shapes":  # a structured reply's shape check (one linear json.loads), not a reader
        return
    if name == "guidelines.choice":  # a choice is A, B or none; too long is none
        assert reason == "no choice"
        return
    assert reason.startswith(TOO_LONG)


def test_the_issue_cases_become_recorded_failures():
    """Hand-checked outcomes of the inputs named in issue #13."""
    assert parse_verifier("[" * 1000).error == "no score in verifier output"
    assert parse_category("[" * 1000) == (None, "no category in classifier output")
    assert parse_generated("[" * 1000, 3)[1].startswith("no question")
    assert parse_answer("[" * 1000).reason == "no_answer"
    coral = parse_response("SymptomEnt(Symptom=" + "+".join(["'a'"] * 7000) + ")", CORAL_TUPLES)
    assert coral.tuples[0].method == "tokens"  # too deep for ast: read by the token fallback
    stalled = parse_response("A(" * 20_000, CORAL_TUPLES)
    assert stalled.tuples == [] and stalled.failures == []  # no keyword: prose, ignored


def test_answers_inside_deep_or_broken_text_are_still_found():
    """The linear scanner keeps what the old parsers read."""
    noise = "[" * 5000 + " noise "
    assert parse_verifier(noise + '{"score": -1, "reason": "a } in a string"}').score == -1
    assert parse_answer(noise + '{"final_path": "NSCL-1-1 -> NSCL-2-1"}').path == (
        "NSCL-1-1",
        "NSCL-2-1",
    )
    got = parse_generated('Here: [{"example_question": "Q?", "example_assumption": "A"}] done', 3)
    assert got == ([{"example_question": "Q?", "example_assumption": "A"}], "")
    text = (
        "<think>" + "x" * 1000 + "</think>" + "<think>unclosed NSCL-9-9" + " NSCL-1-1 -> NSCL-2-2"
    )
    assert parse_answer(text).path == ("NSCL-1-1", "NSCL-2-2")


def test_bracket_spans_skip_nesting_past_the_depth_limit():
    shallow = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    deep = "[" * (MAX_JSON_DEPTH + 2) + "]" * (MAX_JSON_DEPTH + 2)
    assert (0, len(shallow)) in bracket_spans(shallow)
    spans = bracket_spans(deep)
    assert (0, len(deep)) not in spans and (1, len(deep) - 1) in spans
    # strings hide brackets, a mismatched closer drops what it skips
    assert bracket_spans('{"a": "]}"} [1, {2]') == [(0, 11), (12, 19)]


# The linear rewrites read short texts exactly as the backtracking regexes they replace did.
_OLD_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_OLD_TUPLE_LIKE = re.compile(r"\b([A-Z]\w*)\((?=[^)]*\w\s*=)")


def _old_strip_reasoning(text: str) -> str:
    text = _OLD_THINK.sub(" ", text)
    for tag in ("</think>", "</thinking>", "</reasoning>"):
        if tag in text:
            text = text.rsplit(tag, 1)[1]
    return text


THINK_TOKENS = ["<think>", "</think>", "<THINK>", "<reasoning>", "</reasoning>", "<thinking>"]
TUPLE_TOKENS = ["A(", "Xy(", "b(", ")", "=", " = ", "x", "Name", " ", "(", "9"]


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from([*THINK_TOKENS, "</thinking>", " a ", "\n"]), max_size=20))
def test_reasoning_blocks_are_dropped_as_before(tokens):
    text = "".join(tokens)
    assert strip_reasoning(text) == _old_strip_reasoning(text)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(TUPLE_TOKENS), max_size=20))
def test_tuple_like_lines_are_found_as_before(tokens):
    text = "".join(tokens)
    old = _OLD_TUPLE_LIKE.search(text)
    assert _tuple_like(text) == (old.group(1) if old else None)
