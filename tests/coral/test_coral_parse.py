"""The namedtuple parser on messy model outputs (nothing is executed)."""

from __future__ import annotations

from oncoeval.core.records import Response
from oncoeval.studies.coral.parse import (
    allowed_tuples,
    parse_response,
    parsed_rows,
    values_from_raw,
)

RAD = allowed_tuples("radiology")


def test_clean_tuple_is_read_through_ast():
    out = parse_response(
        "RadTest(RadiologyTest='MRI', Datetime='{01/01/2020}', Site='{left breast}', "
        "Reason='{lump}', Result='{abnormal mass}')",
        RAD,
    )
    assert out.failures == []
    (tup,) = out.tuples
    assert tup.method == "ast"
    assert tup.fields == {
        "RadiologyTest": ["MRI"],
        "Datetime": ["01/01/2020"],
        "Site": ["left breast"],
        "Reason": ["lump"],
        "Result": ["abnormal mass"],
    }


def test_set_inside_a_string_as_the_supplement_writes_it_falls_back_to_tokens():
    out = parse_response(
        "RadTest(RadiologyTest='PETCT', Datetime='{01/01/2020', '02/03/2020}', "
        "Site='{left, right breast}', Reason='{unknown}', Result='{unknown}')",
        RAD,
    )
    (tup,) = out.tuples
    assert tup.method == "tokens"
    assert tup.fields["Datetime"] == ["01/01/2020", "02/03/2020"]
    assert tup.fields["Site"] == ["left, right breast"]  # one value: commas inside quotes stay


def test_several_tuples_on_a_line_numbering_prose_and_missing_fields():
    text = (
        "Here are the radiology studies:\n"
        "1. RadTest(RadiologyTest=\"CT\", Datetime={'2019'}) RadTest(RadiologyTest='US')\n"
        "I hope this helps (let me know).\n"
    )
    out = parse_response(text, RAD)
    assert [t.fields["RadiologyTest"] for t in out.tuples] == [["CT"], ["US"]]
    assert out.tuples[0].fields["Site"] == ["unknown"]  # a missing field is unknown
    assert out.tuples[1].fields["Datetime"] == ["unknown"]
    assert out.failures == []  # prose is ignored, not a failure


def test_wrapped_tuple_escaped_quote_and_apostrophe():
    text = "RadTest(RadiologyTest='MRI', Datetime='{2019}',\n Result='{patient\\'s mass}')"
    (tup,) = parse_response(text, RAD).tuples
    assert tup.fields["Result"] == ["patient's mass"]
    (tup,) = parse_response("RadTest(RadiologyTest='MRI', Result='{patient's mass}')", RAD).tuples
    assert tup.fields["Result"] == ["patient's mass"]


def test_failures_are_counted_with_reasons():
    text = (
        "SymptomEnt(Symptom='lump', Datetime={'x'})\n"  # not asked for in this task
        "RadTest(Datetime='{2019}')\n"  # no primary value
        "RadTest(RadiologyTest='', Site='{breast}')\n"
    )
    out = parse_response(text, RAD)
    assert out.tuples == []
    assert [(f.line_no, f.reason) for f in out.failures] == [
        (1, "tuple name 'SymptomEnt' not asked for"),
        (2, "no RadiologyTest value in RadTest"),
        (3, "no RadiologyTest value in RadTest"),
    ]


def test_model_text_is_never_executed():
    text = "RadTest(RadiologyTest=__import__('os').getcwd(), Datetime='{2019}')"
    (tup,) = parse_response(text, RAD).tuples
    assert tup.method == "tokens"  # literal_eval refuses the call; the tokenizer reads text
    assert tup.fields["RadiologyTest"] == ["os"]  # the quoted text, not a working directory


def test_values_from_raw_handles_stray_quotes_and_braces():
    assert values_from_raw("'{Site of spread'}") == ["Site of spread"]
    assert values_from_raw("{'a', 'b'}") == ["a", "b"]
    assert values_from_raw(" unknown ") == ["unknown"]


def test_parsed_rows_record_errors_empty_answers_and_extra_tuples():
    meta = {"doc_id": "d1", "section": "hpi", "subtype": "symptoms_at_diagnosis"}
    err = parsed_rows(Response("r", "m", None, error="timeout", meta=meta))
    assert [(r["status"], r["reason"]) for r in err] == [("error", "timeout")]
    empty = parsed_rows(Response("r", "m", "No symptoms.", meta=meta))
    assert [r["status"] for r in empty] == ["empty"]
    rows = parsed_rows(
        Response(
            "r",
            "m",
            "CancerDiagnosis(Datetime={'03/01/2019'})\n"
            "SymptomEnt(Symptom='Abdominal Pain', Datetime={'01/01/2019'})",
            meta=meta,
        )
    )
    assert [(r["tuple_name"], r["value"]) for r in rows] == [
        ("CancerDiagnosis", "03/01/2019"),
        ("SymptomEnt", "Abdominal Pain 01/01/2019"),
    ]
