"""The score stage: judged records -> the per-question scores table, worked by hand."""

import json

import pandas as pd

from oncoeval.studies.cancer_myth.score import read_scores, score


def _judged(score, parse_error="", **extra):
    return {
        "question_id": "q1",
        "cluster": "myth:3",
        "category": "no treatment",
        "from_model": "gpt",
        "question": "Q?",
        "correction": "C",
        "verifier": "v",
        "answer": "A",
        "retried": parse_error != "",
        "score": score,
        "reason": "R" if score is not None else "",
        "parse_error": parse_error,
        **extra,
    }


def _run(tmp_path, judged, jury, combine):
    path = tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in judged))
    score(path, jury, combine, tmp_path / "scores.tsv")
    return tmp_path / "scores.tsv"


def test_one_verifier_keeps_the_reason_and_leaves_an_unreadable_verdict_unscored(tmp_path):
    out = _run(
        tmp_path,
        [_judged(-1), {**_judged(None, "no score"), "question_id": "q2", "cluster": "question:q2"}],
        ["v"],
        "majority",
    )
    lines = out.read_text().splitlines()
    assert lines[0].split("\t") == [
        "question_id",
        "unit",
        "cluster",
        "category",
        "from_model",
        "score",
        "parse_error",
        "verifier",
        "retried",
        "reason",
    ]
    assert lines[1].split("\t") == [
        "q1", "q1", "myth:3", "no treatment", "gpt", "-1", "", "v", "False", "R"
    ]  # fmt: skip
    assert lines[2].split("\t") == [
        "q2", "q2", "question:q2", "no treatment", "gpt", "", "no score", "v", "True", ""
    ]  # fmt: skip
    assert read_scores(out)["score"].isna().tolist() == [False, True]


def test_a_jury_keeps_every_vote_and_its_mean_stays_a_fraction(tmp_path):
    judged = [
        _judged(1 / 3, votes=[1, 0, 0], reason=""),
        {**_judged(None, "tie", votes=[1, -1, None]), "question_id": "q2"},
    ]
    df = pd.read_csv(
        _run(tmp_path, judged, ["a", "b", "c"], "mean"), sep="\t", keep_default_na=False
    )
    assert df["votes"].tolist() == ["[1, 0, 0]", "[1, -1, null]"]
    assert float(df.loc[0, "score"]) == 1 / 3  # not rounded to a score: the mean of (1, 0, 0)
    assert df["reason"].tolist() == ["", ""]  # a jury has no single reason
