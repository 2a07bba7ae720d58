"""The toy study's formulas on hand-computed examples, and its bad-input error."""

from __future__ import annotations

import pandas as pd
import pytest

from oncoeval.core.errors import InputError
from oncoeval.core.records import Response
from oncoeval.studies.toy.aggregate import accuracy_table, referee_agreement_table
from oncoeval.studies.toy.parse import parse_answer, parsed_table
from oncoeval.studies.toy.prepare import load_questions
from oncoeval.studies.toy.score import score_answers

QUESTIONS = [
    {"id": "a", "question": "1 + 1?", "answer": 2},
    {"id": "b", "question": "?", "answer": 7},
]


def test_the_first_whole_number_is_the_answer():
    assert parse_answer("It is 12, not 13.") == 12
    assert parse_answer("minus -3") == -3
    assert parse_answer("twelve") is None


def test_a_failed_call_and_an_unparseable_answer_are_unscored():
    responses = [
        Response("toy-a", "m", "2"),
        Response("toy-b", "m", None, error="timeout"),
    ]
    scores = score_answers(parsed_table(responses), QUESTIONS)
    assert scores["status"].tolist() == ["ok", "failed"]
    assert scores["correct"].tolist()[0] == 1 and pd.isna(scores["correct"].tolist()[1])


def test_accuracy_is_the_share_right_among_scored_questions():
    # 1 right, 1 wrong, 1 unscored -> accuracy 1/2 over n = 2, one unscored
    df = pd.DataFrame({"correct": [1, 0, None]})
    table = accuracy_table({"m": df}, {"n_resamples": 100, "ci": 0.95, "seed": 0})
    row = table.iloc[0]
    assert (row["n"], row["n_unscored"], row["accuracy"]) == (2, 1, 0.5)
    assert 0 <= row["accuracy_ci_low"] <= 0.5 <= row["accuracy_ci_high"] <= 1


def test_a_question_without_an_answer_names_the_file_and_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "?", "answer": 1}\n{"id": "b", "question": "?"}\n')
    with pytest.raises(InputError, match=r"q\.jsonl, line 2: no 'answer'"):
        load_questions(path)


def test_referee_agreement_counts_equal_numbers_among_answers_both_gave():
    ok = {"status": ["ok", "ok", "unparseable"], "id": ["a", "b", "c"], "answer": [2, 3, None]}
    referee = pd.DataFrame(
        {"id": ["a", "b", "c"], "status": ["ok", "ok", "ok"], "answer": [2, 4, 1]}
    )
    table = referee_agreement_table({"m": pd.DataFrame(ok)}, referee)
    # a and b both answered (c is unparseable): a is the same, b is not -> 1 of 2
    assert table.iloc[0][["n", "n_same", "share_same"]].tolist() == [2, 1, 0.5]
