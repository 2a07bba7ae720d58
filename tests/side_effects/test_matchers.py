"""Matchers: one interface, one-to-one pairs, restricted to what was predicted."""

from pathlib import Path

import numpy as np
import pytest

from oncoeval.records import Response
from oncoeval.studies.side_effects.aliases import AliasTable
from oncoeval.studies.side_effects.matchers import (
    LexicalMatcher,
    LLMMatcher,
    MatchTask,
    make_matcher,
    one_to_one,
)

REPO = Path(__file__).resolve().parents[2]
SYNONYMS = AliasTable(
    {"erythema": "skin redness", "radiation dermatitis": "skin redness", "tiredness": "fatigue"}
)


def test_assignment_prefers_more_pairs_over_higher_similarity():
    # Greedy would take (0, 0) at 0.95 and leave item 1 unmatched; the optimum pairs both.
    score = np.array([[0.95, 0.90], [0.80, 0.10]])
    assert one_to_one(score, score >= 0.5) == [(0, 1), (1, 0)]


def test_lexical_matches_synonyms_one_to_one():
    task = MatchTask(
        "t",
        ["erythema", "Radiation dermatitis", "tiredness", "nausea"],
        ["skin redness", "fatigue", "rib fracture"],
    )
    pairs = LexicalMatcher(SYNONYMS).run([task])["t"].pairs
    # two predictions mean 'skin redness'; only one of them may take it
    assert len(pairs) == 2
    assert {j for _, j in pairs} == {0, 1}
    assert len({i for i, _ in pairs}) == 2


def test_nothing_is_matched_without_predictions():
    matcher = LexicalMatcher(SYNONYMS)
    assert matcher.run([MatchTask("t", [], ["fatigue"])])["t"].pairs == []


@pytest.fixture(scope="module")
def embedding():
    return make_matcher("embedding", {"model": "embedded:all-minilm-l6-v2", "threshold": 0.6})


def test_embedding_matcher_pairs_paraphrases_one_to_one(embedding):
    task = MatchTask(
        "t",
        [
            "redness of the skin",
            "skin redness",
            "inflammation of the lungs",
            "hair loss on the scalp",
        ],
        ["skin redness", "lung inflammation", "rib fracture"],
    )
    result = embedding.run([task])["t"]
    assert result.pairs == [(0, 0), (2, 1)] or result.pairs == [(1, 0), (2, 1)]
    identical = embedding.run(
        [MatchTask("u", ["fatigue", "rib fracture"], ["rib fracture", "fatigue"])]
    )["u"]
    assert identical.pairs == [(0, 1), (1, 0)]


def test_llm_answers_are_parsed_into_valid_pairs():
    parsed = LLMMatcher.parse("A1 = B2\nA3 -> B1\nA2 = B2\nA9 = B1\n", n_left=3, n_right=2)
    assert parsed.pairs == [(0, 1), (2, 0)]
    assert parsed.status == "ok" and "2 out-of-range or repeated" in parsed.reason
    assert LLMMatcher.parse("NONE", 2, 2).pairs == []


def test_llm_unparseable_and_failed_answers_are_counted_not_dropped():
    tasks = [
        MatchTask("a", ["x"], ["y"]),
        MatchTask("b", ["x"], ["y"]),
        MatchTask("c", ["x"], ["y"]),
    ]
    responses = [
        Response("a", "judge", "The lists share fatigue."),
        Response("b", "judge", None, error="HTTP 500"),
    ]
    results = LLMMatcher("").read(tasks, responses)
    assert [results[k].status for k in "abc"] == ["unparseable", "error", "error"]


def test_llm_prompt_numbers_both_lists():
    template = (REPO / "config/prompts/side_effects/match_llm.txt").read_text()
    (request,) = LLMMatcher(template).requests(
        [MatchTask("k", ["fatigue"], ["tiredness", "nausea"])]
    )
    prompt = request.messages[0]["content"]
    assert "A1. fatigue" in prompt and "B2. nausea" in prompt
    assert request.params["temperature"] == 0.0
