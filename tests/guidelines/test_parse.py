"""Parsing model answers into paths, and validating paths against the tree."""

import pytest

from oncoeval.studies.guidelines.parse import (
    check_path,
    parse_answer,
    parse_label,
    split_path,
    trim_surveillance,
)
from oncoeval.studies.guidelines.tree import NOT_COMPLIANT, load_tree

from .conftest import DEMO

P = ("LUNG-1-1", "LUNG-1-2", "LUNG-4-1", "LUNG-4-3")


@pytest.fixture(scope="module")
def tree():
    return load_tree(DEMO / "guideline.json")


@pytest.mark.parametrize(
    "text",
    [
        '{"final_path": "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3"}',
        '```json\n{"final_path": "LUNG-1-1 > LUNG-1-2 > LUNG-4-1 > LUNG-4-3"}\n```',
        '<think>maybe LUNG-1-1 -> LUNG-1-3?</think>\n{"final_path": "LUNG-1-1 → LUNG-1-2 → LUNG-4-1 → LUNG-4-3"}',
        'Reasoning... </think> Answer: {"final_path": ["LUNG-1-1", "LUNG-1-2", "LUNG-4-1", "LUNG-4-3"]}',
        "The path is lung-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3.",
        '{"final_path": "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3", oops',
    ],
)
def test_paths_are_found_in_fences_think_blocks_arrows_and_broken_json(text):
    assert parse_answer(text).path == P


def test_not_compliant_answers():
    parsed = parse_answer('{"final_path": "NOT_GUIDELINE_COMPLIANT", "reason": "no TKI"}')
    assert parsed.path == (NOT_COMPLIANT,) and parsed.explanation == "no TKI"
    assert parse_answer("This care is not guideline compliant.").path == (NOT_COMPLIANT,)
    assert parse_label("NOT_GUIDELINE_COMPLIANT").path == (NOT_COMPLIANT,)


def test_unparseable_answers_give_a_reason_not_a_path():
    for text in (None, "", "I am not sure what to do.", '{"final_path": ""}'):
        parsed = parse_answer(text)
        assert parsed.path is None and parsed.reason == "no_answer"


def test_longest_chain_wins_over_a_mentioned_node():
    text = "Start at LUNG-1-1. Path: LUNG-1-1 -> LUNG-1-2 -> LUNG-2-1 -> LUNG-2-3"
    assert parse_answer(text).path == ("LUNG-1-1", "LUNG-1-2", "LUNG-2-1", "LUNG-2-3")


def test_split_path_accepts_each_arrow_and_commas():
    assert split_path("A-1-1 -> A-1-2 > A-2-1 → A-2-2 => A-3-1, A-3-2") == (
        "A-1-1",
        "A-1-2",
        "A-2-1",
        "A-2-2",
        "A-3-1",
        "A-3-2",
    )


def test_check_path_names_each_kind_of_invalid_path(tree):
    assert check_path(tree, P) is None
    assert check_path(tree, (NOT_COMPLIANT,)) is None
    assert check_path(tree, ("LUNG-1-1", "LUNG-1-2", "LUNG-1-4")) is None  # information-limited end
    assert check_path(tree, ()) == "no_answer"
    assert check_path(tree, ("LUNG-1-1", "LUNG-9-9")) == "unknown_node"
    assert check_path(tree, ("LUNG-1-1", "LUNG-4-1", "LUNG-4-3")) == "broken_edge"
    assert check_path(tree, ("LUNG-1-1", "LUNG-1-2", "LUNG-4-1")) == "not_terminal"
    assert check_path(tree, ("LUNG-1-1", "LUNG-1-1")) == "repeated_node"


def test_trailing_surveillance_nodes_are_trimmed_only_at_the_end(tree):
    after = ("LUNG-1-1", "LUNG-1-2", "LUNG-2-1", "LUNG-2-3", "LUNG-6-1", "LUNG-6-2")
    assert trim_surveillance(tree, after) == after[:4]
    recurrence = after + ("LUNG-4-1", "LUNG-4-3")
    assert trim_surveillance(tree, recurrence) == recurrence
    assert check_path(tree, after) == "not_terminal"  # untrimmed, it stops at surveillance


def test_a_reason_flagged_answer_is_the_non_compliant_answer_whatever_its_path():
    # the public evaluation reads a reason that carries the token as the non-compliant answer
    flagged = '{"final_path": "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3", "reason": "NOT_GUIDELINE_COMPLIANT: no TKI given"}'
    parsed = parse_answer(flagged)
    assert parsed.path == (NOT_COMPLIANT,)
    assert parsed.explanation == "NOT_GUIDELINE_COMPLIANT: no TKI given"
    # the same in JSON that does not load (trailing text, unclosed brace)
    assert parse_answer(flagged[:-1] + ", oops").path == (NOT_COMPLIANT,)
    # a reason in plain words without the token leaves the path as given
    plain = '{"final_path": "LUNG-1-1 -> LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3", "reason": "fits"}'
    assert parse_answer(plain).path == P


def test_a_path_must_start_at_the_root(tree):
    # LUNG-1-2 -> LUNG-4-1 -> LUNG-4-3 is a chain of real edges that skips the root LUNG-1-1
    assert check_path(tree, P[1:]) == "not_from_root"
