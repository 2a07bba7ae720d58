"""Matchers: one interface, one-to-one pairs, restricted to what was predicted."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from oncoeval.core.errors import InputError
from oncoeval.core.records import Response
from oncoeval.studies.side_effects import validation
from oncoeval.studies.side_effects.aliases import AliasTable
from oncoeval.studies.side_effects.matchers import (
    LexicalMatcher,
    LLMMatcher,
    MatchTask,
    assign,
    make_matcher,
    one_to_one,
)
from oncoeval.studies.side_effects.reference import load_reference, vocabulary

REPO = Path(__file__).resolve().parents[2]
SYNONYMS = AliasTable(
    {"erythema": "skin redness", "radiation dermatitis": "skin redness", "tiredness": "fatigue"}
)


def test_assignment_maximises_total_similarity_not_the_count():
    # (0,0)+(1,1) = 0.99 + 0.50 = 1.49 beats (0,1)+(1,0) = 0.90 + 0.55 = 1.45
    score = np.array([[0.99, 0.90], [0.55, 0.50]])
    assert one_to_one(score, score >= 0.5) == [(0, 0), (1, 1)]
    # one pair at 0.95 beats two at 0.52 + 0.41 = 0.93; the earlier rule took the most pairs
    score = np.array([[0.95, 0.52], [0.41, 0.10]])
    assert one_to_one(score, score >= 0.4) == [(0, 0)]
    assert one_to_one(score, score >= 0.4, most_pairs_first=True) == [(0, 1), (1, 0)]


def test_identical_strings_pair_first_and_distinct_reference_terms_never_pair():
    vocab = ["breast pain", "breast swelling", "nipple pain"]
    left = ["Breast  swelling", "breast ache"]
    right = ["breast pain", "breast swelling"]
    # Similarities that would pair swelling with pain and leave the identical pair out.
    score = np.array([[0.99, 0.40], [0.10, 0.98]])
    assert one_to_one(score, score >= 0.3) == [(0, 0), (1, 1)]
    # identical first; then 'breast ache' (not a term) may take 'breast pain' only if similar
    assert assign(left, right, score, score >= 0.3, vocab) == [(0, 1)]
    # two distinct terms stay apart even at similarity 1
    assert assign(["breast pain"], ["nipple pain"], np.ones((1, 1)), np.ones((1, 1)), vocab) == []


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
    parsed = LLMMatcher.parse("A1 = B2\nA3 -> B1\nA1 = B2\n", n_left=3, n_right=2)
    assert parsed.pairs == [(0, 1), (2, 0)]
    assert parsed.status == "ok" and parsed.reason == "1 repeated pairs dropped"
    assert LLMMatcher.parse("NONE", 2, 2).pairs == []
    assert LLMMatcher.parse("**None**", 2, 2).status == "ok"


def test_llm_decorated_pair_lines_count():
    text = "Matches:\n**A1** = **B1**\n- A2 (fatigue) = B3 (fatigue).\n3. `A3` → `B2`"
    parsed = LLMMatcher.parse(text, 3, 3)
    assert (parsed.pairs, parsed.status) == ([(0, 0), (1, 2), (2, 1)], "ok")


def test_llm_reasoning_block_is_removed():
    text = "<think>A1 = B1? A2: B2 looks close, A3 - B1 too</think>\nA2 = B2"
    assert LLMMatcher.parse(text, 3, 3).pairs == [(1, 1)]
    # a block that never closes is reasoning cut short: nothing of it is read as pairs
    unclosed = LLMMatcher.parse("<think>A1 = B1\nA2 = B2", 3, 3)
    assert (unclosed.status, unclosed.pairs) == ("unparseable", [])


@pytest.mark.parametrize(
    "answer",
    [
        "A1 = B1\nA4: B4 is different",
        "NONE (I considered A1 - B2)",
        "A1 = B1, A2 = B2",
        "The pairs are A1 = B1 and A2 = B2.",
    ],
)
def test_llm_notes_that_mention_pairs_are_unparseable_not_pairs(answer):
    parsed = LLMMatcher.parse(answer, 4, 4)
    assert parsed.status == "unparseable" and parsed.pairs == []
    assert "names items" in parsed.reason


def test_llm_truncated_answer_is_recorded_not_scored():
    task = MatchTask("t", ["fatigue", "nausea"], ["fatigue", "nausea"])
    cut = Response("t", "judge", "A1 = B1\nA2 =", finish_reason="length")
    result = LLMMatcher("").read([task], [cut])["t"]
    assert result.status == "truncated" and result.pairs == []


def test_llm_contradictory_pairs_go_through_the_assignment_and_are_flagged():
    task = MatchTask("t", ["x1", "x2"], ["y1", "y2"])
    answer = Response("t", "judge", "A1 = B2\nA1 = B1\nA2 = B2", finish_reason="stop")
    result = LLMMatcher("").read([task], [answer])["t"]
    # the largest one-to-one assignment, as the other matchers take, not the first listed
    assert result.pairs == [(0, 0), (1, 1)]
    assert result.status == "contradictory"
    assert "A1=B2" in result.reason
    none_and_pairs = LLMMatcher.parse("NONE\nA1 = B1", 2, 2)
    assert none_and_pairs.status == "contradictory"


def test_llm_pairs_of_distinct_reference_terms_are_dropped_with_a_note():
    vocab = ["breast pain", "breast swelling"]
    task = MatchTask("t", ["breast pain", "tiredness"], ["breast swelling", "fatigue"])
    answer = Response("t", "judge", "A1 = B1\nA2 = B2")
    result = LLMMatcher("").read([task], [answer], vocab)["t"]
    assert result.pairs == [(1, 1)] and result.status == "ok"
    assert "dropped by the assignment (A1=B1)" in result.reason


def test_llm_out_of_range_pairs_make_the_answer_unparseable():
    parsed = LLMMatcher.parse("A1 = B1\nA9 = B1", n_left=3, n_right=2)
    assert parsed.status == "unparseable" and "do not exist" in parsed.reason


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
    (request,) = LLMMatcher(template, max_new_tokens=64).requests(
        [MatchTask("k", ["fatigue"], ["tiredness", "nausea"])]
    )
    prompt = request.messages[0]["content"]
    assert "A1. fatigue" in prompt and "B2. nausea" in prompt
    assert (request.params["temperature"], request.params["max_new_tokens"]) == (0.0, 64)
    with pytest.raises(ValueError, match="judge_max_new_tokens"):
        LLMMatcher(template).requests([MatchTask("k", ["fatigue"], ["nausea"])])


VALIDATION = REPO / "resources/side_effects/matcher_validation.tsv"
# the published reference, read where this machine has it (never committed)
SPREADSHEET = Path("/work/shared/data/side_effects/breast-rt-side-effects.xlsx")


def test_validation_set_holds_the_31_reference_terms_with_lay_wordings():
    df = validation.read_validation(VALIDATION)
    terms = validation.vocabulary(df)
    assert len(terms) == 31
    lay = df[df.kind == "lay"]
    assert set(lay.reference) == set(terms)  # every term has lay wordings
    assert (df.kind == "negative").sum() >= 30
    if SPREADSHEET.is_file():  # the published reference, when this machine has it
        site_aliases = AliasTable.read(REPO / "resources/side_effects/site_aliases.tsv")
        names = AliasTable.read(REPO / "resources/side_effects/side_effect_aliases.tsv")
        reference = load_reference(SPREADSHEET, site_aliases, names)
        assert terms == vocabulary(reference)


def test_validation_file_errors_name_the_row(tmp_path):
    bad = tmp_path / "v.tsv"
    bad.write_text(
        "prediction\treference\tsame\tkind\nfatigue\tfatigue\tyes\tterm\n"
        "tiredness\tfatigue\tno\tlay\n"
    )
    with pytest.raises(InputError, match=r"row 3 .*a lay row must have same = yes"):
        validation.read_validation(bad)


@pytest.fixture(scope="module")
def candidates(embedding):
    return validation.candidate_table(
        validation.read_validation(VALIDATION),
        REPO / "resources/side_effects/synonyms.tsv",
        embedding,
        thresholds=(0.4, 0.5, 0.6, 0.7),
    ).set_index("matcher")


def test_no_matcher_pairs_two_distinct_reference_terms_and_identical_terms_match(candidates):
    current = candidates[candidates.rule == "assignment"]
    assert list(current.index) == ["lexical", *(f"embedding@{t:.2f}" for t in (0.4, 0.5, 0.6, 0.7))]
    assert (current.distinct_term_pairs == 0).all()  # each term against the other 30
    assert (current.identical_matched == 31).all()
    # the earlier rule paired distinct terms (breast pain with breast swelling, ...)
    assert candidates.loc["embedding@0.60 earlier", "distinct_term_pairs"] > 0


def test_default_matcher_is_the_best_pair_f1_that_pairs_no_distinct_terms(candidates):
    chosen = candidates[candidates.selected]
    assert len(chosen) == 1
    allowed = candidates[candidates.distinct_term_pairs == 0]
    assert chosen.f1.iloc[0] == allowed.f1.max()
    # pair F1 from its own counts: 2TP / (2TP + FP + FN)
    row = chosen.iloc[0]
    assert row.f1 == pytest.approx(2 * row.tp / (2 * row.tp + row.fp + row.fn))
    schema = yaml.safe_load((REPO / "config/schemas/side_effects.schema.yaml").read_text())
    defaults = {
        k: v.get("default") for k, v in schema["properties"]["matcher"]["properties"].items()
    }
    assert (row.method, row.threshold) == (defaults["method"], defaults["threshold"])


def test_lay_wordings_agree_per_matcher(candidates):
    # the embedding matcher finds most rewordings; the synonym table only the few it lists
    assert candidates.loc["embedding@0.50", "recall"] > 0.6
    assert candidates.loc["lexical", "recall"] < candidates.loc["embedding@0.50", "recall"]
    assert candidates.loc["lexical", "precision"] > 0.8
    assert 0.5 < candidates.loc["embedding@0.50", "agreement"] <= 1
