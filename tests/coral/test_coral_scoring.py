"""Per-unit scoring conventions, views, Kruskal-Wallis/BH tables and the review read-back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oncoeval.core.errors import InputError
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.coral.aggregate import bh_qvalues, kruskal_table, summarise
from oncoeval.studies.coral.review import read_sheet, review_sheet, table2
from oncoeval.studies.coral.score import score_model, score_unit


def test_empty_sides_are_unknown_as_published():
    both_empty = score_unit([], [])
    assert both_empty["em_f1"] == 1 and both_empty["bleu4"] == pytest.approx(1)
    assert both_empty["gold_unknown_only"] and both_empty["n_gold"] == 0
    hallucinated = score_unit(["mri 2019"], [])
    assert hallucinated["em_f1"] == 0 and hallucinated["n_pred"] == 1
    unknown_gold = score_unit(["mri unknown"], ["mri unknown"], ["unknown"])
    assert unknown_gold["gold_unknown_only"] and unknown_gold["em_f1"] == 1
    informative = score_unit(["mri unknown"], ["mri 2019", "mri unknown"], ["2019", "unknown"])
    assert not informative["gold_unknown_only"]
    assert informative["em_recall"] == 0.5 and informative["em_precision"] == 1


def test_score_model_makes_one_unit_per_field_and_counts_failures():
    parsed = pd.DataFrame(
        [
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "genomics",
                "status": "ok",
                "tuple_name": "Genomics",
                "field": "Datetime",
                "value": "brca 2019",
            },
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "genomics",
                "status": "ok",
                "tuple_name": "Genomics",
                "field": "Result",
                "value": "brca unknown",
            },
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "genomics",
                "status": "failed",
                "tuple_name": "",
                "field": "",
                "value": "",
            },
        ]
    )
    gold = pd.DataFrame(
        [
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "genomics",
                "field": "Datetime",
                "value": "BRCA 2019",
                "field_value": "2019",
            },
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "genomics",
                "field": "Result",
                "value": "BRCA negative",
                "field_value": "negative",
            },
        ]
    )
    gold["view"] = "published"
    scores = score_model(parsed, gold)
    # both gold views give units; the clean gold of this test is empty: its sides are unknown
    assert scores.groupby("gold_view").size().to_dict() == {"clean": 2, "published": 2}
    scores = scores[scores["gold_view"] == "published"].set_index("field")
    assert list(scores.index) == ["Datetime", "Result"]
    assert scores.loc["Datetime", "em_f1"] == 1  # case and spaces do not matter
    assert scores.loc["Result", "em_f1"] == 0
    assert (scores["parse_failures"] == 1).all()


def units(values, groups):
    """One histology-Datetime unit per note with the same value on every metric."""
    rows = []
    for i, v in enumerate(values):
        rows.append(
            {
                "doc_id": f"n{i}",
                "section": "hpi",
                "subtype": "histology",
                "field": "Datetime",
                "bleu4": v,
                "rouge1": v,
                "em_f1": v,
                "n_pred": 1,
                "n_gold": 1,
                "gold_unknown_only": False,
                "gold_view": "published",
                "unscored": False,
            }
        )
    meta = pd.DataFrame({"doc_id": [f"n{i}" for i in range(len(values))], "gender": groups})
    return pd.DataFrame(rows), meta


def test_kruskal_wallis_on_separated_groups_matches_the_hand_value():
    scores, meta = units([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], ["F", "F", "F", "M", "M", "M"])
    table = kruskal_table({"m": scores}, meta, "gender")
    row = table[table["metric"] == "EM_F1"].iloc[0]
    # ranks 1,2,3 vs 4,5,6: H = 12/(6*7) * (6^2/3 + 15^2/3) - 3*7 = 3.857
    assert row["statistic"] == pytest.approx(12 / 42 * (36 / 3 + 225 / 3) - 21)
    assert row["p_value"] == pytest.approx(0.0495, abs=1e-4)
    assert row["groups"] == "F:3;M:3" and row["label"] == "Histology Datetime"
    # three metrics with the same p: BH leaves them at p
    assert table["q_value"].to_numpy() == pytest.approx(table["p_value"].to_numpy())


def test_kruskal_wallis_without_two_groups_or_with_constant_values_has_no_p():
    scores, meta = units([1.0, 1.0], ["F", "M"])
    assert (kruskal_table({"m": scores}, meta, "gender")["note"] == "all values equal").all()
    scores, meta = units([0.1, 0.9], ["F", "F"])
    assert (kruskal_table({"m": scores}, meta, "gender")["note"] == "fewer than two groups").all()


def test_benjamini_hochberg_q_values_by_hand():
    # sorted p 0.01, 0.03, 0.04 -> 0.03, 0.045, 0.04 -> monotone 0.03, 0.04, 0.04
    q = bh_qvalues(np.array([0.01, 0.04, np.nan, 0.03]))
    assert q[[0, 1, 3]] == pytest.approx([0.03, 0.04, 0.04])
    assert np.isnan(q[2])


def _datetime_unit(doc, section, score, n, unknown_only):
    """One scored grade/Datetime unit: every metric ``score``, ``n`` predicted and gold values."""
    return {
        "doc_id": doc,
        "section": section,
        "subtype": "grade",
        "field": "Datetime",
        "bleu4": score,
        "rouge1": score,
        "em_f1": score,
        "n_pred": n,
        "n_gold": n,
        "gold_unknown_only": unknown_only,
    }


def test_views_drop_no_gold_and_unknown_only_units():
    scores = pd.DataFrame(
        [
            # note a: a no-gold unit scoring 1 and an informative unit scoring 0
            _datetime_unit("a", "hpi", score=1.0, n=0, unknown_only=True),
            _datetime_unit("a", "ap", score=0.0, n=1, unknown_only=False),
            # note b: gold present but only 'unknown'
            _datetime_unit("b", "hpi", score=1.0, n=1, unknown_only=True),
        ]
    )
    scores["gold_view"], scores["unscored"] = "published", False
    # the clean gold of note a's informative unit, matched this time
    clean = scores.iloc[[1]].assign(gold_view="clean", bleu4=1.0, rouge1=1.0, em_f1=1.0)
    scores = pd.concat([scores, clean], ignore_index=True)
    table = summarise({"m": scores}, [], BootstrapSettings(n_resamples=200)).set_index("view")
    # published: note means 0.5 (a) and 1 (b) -> 0.75; gold_present: 0 and 1 -> 0.5;
    # informative: only note a's second unit -> 0
    assert table.loc["published", "em_f1"] == pytest.approx(0.75)
    assert table.loc["gold_present", "em_f1"] == pytest.approx(0.5)
    assert table.loc["informative", "em_f1"] == 0 and table.loc["informative", "n_units"] == 1
    assert table.loc["clean", "em_f1"] == 1 and table.loc["clean", "n_units"] == 1
    assert (table["n_unscored"] == 0).all()


def test_review_sheet_round_trip_to_table2(tmp_path):
    parsed = pd.DataFrame(
        [
            {
                "doc_id": "d1",
                "section": "hpi",
                "subtype": "radiology",
                "status": "ok",
                "tuple_index": "0",
                "tuple_name": "RadTest",
                "field": f,
                "primary": "MRI",
                "field_value": v,
            }
            for f, v in [
                ("Datetime", "2019"),
                ("Site", "breast"),
                ("Reason", "unknown"),
                ("Result", "mass"),
            ]
        ]
    )
    sheet = review_sheet(parsed)
    assert list(sheet["item"]) == [
        "RadiologyTest",
        "RadiologyTest - Datetime",
        "RadiologyTest - Site",
        "RadiologyTest - Reason",
        "RadiologyTest - Result",
    ]
    assert sheet["output"].iloc[1] == "MRI | 2019"
    sheet["category"] = ["1", "1", "2b", "3d", ""]
    path = tmp_path / "filled.tsv"
    sheet.to_csv(path, sep="\t", index=False)
    table = table2(read_sheet(path)).set_index("item")
    assert table.loc["RadiologyTest", "1"] == 1.0
    assert table.loc["RadiologyTest - Site", "2b"] == 1.0
    assert "RadiologyTest - Result" not in table.index  # left blank: not reviewed
    total = table[table["kind"] == "TOTAL/MEAN"].iloc[0]
    assert total["sample_size"] == 4 and total["1"] == 0.5 and total["not_reviewed"] == 1

    sheet["category"] = ["1", "4", "", "", ""]
    sheet.to_csv(path, sep="\t", index=False)
    with pytest.raises(InputError, match="row 3: category '4'"):
        read_sheet(path)


def _responses_to_parsed(answers: dict[str, str | None], errors: dict | None = None):
    from oncoeval.core.records import Response
    from oncoeval.studies.coral.parse import PARSED_COLUMNS, parsed_rows

    errors = errors or {}
    rows = []
    for doc_id, text in {**answers, **dict.fromkeys(errors)}.items():
        meta = {"doc_id": doc_id, "section": "hpi", "subtype": "histology"}
        resp = Response(f"{doc_id}|hpi|histology", "m", text, error=errors.get(doc_id), meta=meta)
        rows += parsed_rows(resp)
    return pd.DataFrame(rows, columns=PARSED_COLUMNS).astype(str)


def histology_gold(docs_with_gold: dict[str, str]) -> pd.DataFrame:
    rows = []
    for view in ("published", "clean"):
        for doc_id, date in docs_with_gold.items():
            rows.append(
                {
                    "view": view,
                    "doc_id": doc_id,
                    "section": "hpi",
                    "subtype": "histology",
                    "field": "Datetime",
                    "value": f"IDC {date}",
                    "field_value": date,
                }
            )
    return pd.DataFrame(rows)


def test_unknown_answers_and_missing_gold_are_the_default_all_unknown_tuple():
    # a, b, c: no gold; the model says unknown / N/A / nothing -> 'unknown unknown' both sides
    # d: gold 'IDC 2019', the model says unknown
    parsed = _responses_to_parsed({"a": "unknown", "b": "N/A", "c": "", "d": "unknown"})
    scores = score_model(parsed, histology_gold({"d": "2019"}))
    published = scores[scores["gold_view"] == "published"].set_index("doc_id")
    for doc_id in "abc":
        assert published.loc[doc_id, ["bleu4", "rouge1", "em_f1"]].tolist() == pytest.approx(
            [1, 1, 1]
        )
    # 'unknown unknown' against 'idc 2019': no n-gram in common, every order add-one smoothed:
    # p1 = 1/3, p2 = 1/2, p3 = p4 = 1/1 (no 3- or 4-grams), equal lengths so BP = 1
    assert published.loc["d", "bleu4"] == pytest.approx((1 / 3 * 1 / 2) ** 0.25)
    assert published.loc["d", "rouge1"] == 0 and published.loc["d", "em_f1"] == 0
    assert score_unit([], [])["bleu4"] == pytest.approx(1)
    # the previous convention (a bare 'unknown') scored d at (1/2)^(1/4) * exp(1 - 2) = 0.31
    assert published.loc["d", "bleu4"] == pytest.approx(0.6389, abs=1e-4)


def test_failed_calls_are_unscored_and_counted_in_every_table():
    parsed = _responses_to_parsed({"a": "Histo(Histology='IDC', Datetime={'2019'})"}, {"b": "401"})
    scores = score_model(parsed, histology_gold({"a": "2019", "b": "2020"}))
    failed = scores[scores["doc_id"] == "b"]
    assert failed["unscored"].all() and failed[["bleu4", "rouge1", "em_f1"]].isna().all().all()
    assert (failed["parse_failures"] == 0).all()  # a failed call is not a parse failure
    ok = scores[(scores["doc_id"] == "a") & (scores["gold_view"] == "published")].iloc[0]
    assert ok["em_f1"] == 1 and not ok["unscored"]

    meta = pd.DataFrame({"doc_id": ["a", "b"], "gender": ["F", "M"]})
    table = summarise({"m": scores}, [], BootstrapSettings(n_resamples=200)).set_index("view")
    assert table.loc["published", "n_unscored"] == 1 and table.loc["published", "n_units"] == 2
    assert table.loc["published", "em_f1"] == 1  # the failed call is not a zero
    kw = kruskal_table({"m": scores}, meta, "gender")
    assert (kw["n_unscored"] == 1).all() and (kw["groups"] == "F:1").all()

    # every call failed: no score at all, only counts
    parsed = _responses_to_parsed({}, {"a": "401", "b": "timeout"})
    scores = score_model(parsed, histology_gold({"a": "2019"}))
    assert scores["unscored"].all() and scores["bleu4"].isna().all()
    table = summarise({"m": scores}, [], BootstrapSettings(n_resamples=200)).set_index("view")
    assert table.loc["published", "n_unscored"] == 2 and np.isnan(table.loc["published", "bleu4"])
    kw = kruskal_table({"m": scores}, meta, "gender")
    assert (kw["note"] == "no scored units").all() and (kw["n_unscored"] == 2).all()


def test_review_sheet_has_a_row_for_every_answer_and_none_for_failed_calls():
    parsed = _responses_to_parsed(
        {
            "a": "Histo(Histology='IDC', Datetime={'2019'})",
            "b": "unknown",
            "c": "Histo(Datetime={'2019'})",  # no primary: a parse failure
        },
        {"d": "401"},
    )
    sheet = review_sheet(parsed)
    assert sheet[["doc_id", "kind", "item", "output"]].values.tolist() == [
        ["a", "Entity", "Histology", "IDC"],
        ["a", "Relation", "Histology - Datetime", "IDC | 2019"],
        ["b", "Entity", "Histology", "unknown"],
        ["c", "Entity", "Histology", "unreadable: Histo(Datetime={'2019'})"],
    ]
