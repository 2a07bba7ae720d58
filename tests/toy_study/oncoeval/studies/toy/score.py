"""toy_score: each parsed answer against the question's answer (1 right, 0 wrong, empty when
the answer could not be scored)."""

from __future__ import annotations

import pandas as pd

SCORE_COLUMNS = ["id", "status", "answer", "expected", "correct"]


def score_answers(parsed: pd.DataFrame, questions: list[dict]) -> pd.DataFrame:
    expected = pd.DataFrame(questions)[["id", "answer"]].rename(columns={"answer": "expected"})
    scores = expected.merge(parsed, on="id", how="left")
    scores["status"] = scores["status"].fillna("failed")
    ok = scores["status"] == "ok"
    scores["correct"] = (scores["answer"] == scores["expected"]).astype("Int64").where(ok)
    return scores[SCORE_COLUMNS]
