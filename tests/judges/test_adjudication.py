"""The blinded adjudication sheet: which items, what the adjudicator sees, the read-back."""

import pandas as pd
import pytest

from oncoeval.core.errors import InputError
from oncoeval.judges.adjudication import (
    blind_id,
    read_filled_sheet,
    select,
    uncertainty,
    write_sheet,
)


def rec(qid, score, votes=None, retried=False, parse_error=""):
    return {
        "question_id": qid,
        "question": f"Q{qid}?",
        "correction": f"C{qid}.",
        "answer": f"A{qid}",
        "score": score,
        "votes": votes,
        "retried": retried,
        "parse_error": parse_error,
    }


JUDGED = {
    "model-a": [rec("0", 1), rec("1", None, parse_error="no score"), rec("2", 0, retried=True)],
    "model-b": [rec("0", 1, votes=[1, 1, 0]), rec("1", None, votes=[1, -1], parse_error="tie")],
}


def test_uncertain_items_and_why():
    assert uncertainty(JUDGED["model-a"][0]) == ""
    assert uncertainty(JUDGED["model-a"][1]) == "verdict unreadable"
    assert uncertainty(JUDGED["model-a"][2]) == "verdict needed a retry"
    assert uncertainty(JUDGED["model-b"][0]) == "jurors disagree"
    assert uncertainty(JUDGED["model-b"][1]) == "jury tie"
    assert len(select(JUDGED, 0, 0)) == 4
    # With room for two, the jury's tie and disagreement come first.
    assert {r["why"] for r in select(JUDGED, 2, 0)} == {"jury tie", "jurors disagree"}


def test_sheet_is_blinded_and_reads_back(tmp_path):
    sheet, key = tmp_path / "sheet.tsv", tmp_path / "key.tsv"
    write_sheet(select(JUDGED, 0, 0), "human_score", sheet, key)
    shown = pd.read_csv(sheet, sep="\t", dtype=str, keep_default_na=False)
    assert list(shown.columns) == ["item", "question", "information", "answer", "human_score"]
    assert not shown.apply(lambda col: col.str.contains("model-")).any().any()
    keyed = pd.read_csv(key, sep="\t", dtype=str).set_index("item")
    assert keyed.loc[blind_id("model-b", "1"), "why"] == "jury tie"

    shown.loc[shown["item"] == blind_id("model-a", "1"), "human_score"] = "-1"
    shown.loc[shown["item"] == blind_id("model-b", "0"), "human_score"] = "1"
    shown.to_csv(sheet, sep="\t", index=False)
    items = {blind_id(m, r["question_id"]): {"model": m} for m, rs in JUDGED.items() for r in rs}
    labels = read_filled_sheet(sheet, "human_score", (-1, 0, 1), items)
    assert sorted((x["model"], x["label"]) for x in labels) == [("model-a", -1), ("model-b", 1)]


def test_bad_filled_sheets_name_the_row(tmp_path):
    items = {blind_id("m", "0"): {"model": "m"}}
    path = tmp_path / "filled.tsv"
    path.write_text(f"item\thuman_score\n{blind_id('m', '0')}\t2\n")
    with pytest.raises(InputError, match=r"row 2 .*human_score must be one of"):
        read_filled_sheet(path, "human_score", (-1, 0, 1), items)
    path.write_text("item\thuman_score\nabc\t1\n")
    with pytest.raises(InputError, match="unknown item id"):
        read_filled_sheet(path, "human_score", (-1, 0, 1), items)
    path.write_text("item\n")
    with pytest.raises(InputError, match="missing column 'human_score'"):
        read_filled_sheet(path, "human_score", (-1, 0, 1), items)
