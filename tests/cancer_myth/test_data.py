"""Loaders: published JSON list (extra keys kept), JSONL, concatenated myth objects, bad records."""

import json

import pytest

from oncoeval.core.errors import InputError
from oncoeval.studies.cancer_myth.data import (
    load_myths,
    load_questions,
    normalize_category,
)


def _record(i, **extra):
    rec = {
        "example_question": f"Question {i}?",
        "example_assumption": f"Correction {i}.",
        "source_row": i,
        "source_type": "myth",
        "source_info": {"cancer": "Lung cancer", "myth": "m", "fact": "f", "source": "s"},
        "category": "no treatment",
        "from_model": "gpt-4o",
        "raw_QID": i,
    }
    rec.update(extra)
    return rec


def test_published_list_keeps_extra_keys_in_meta(tmp_path):
    path = tmp_path / "all_data.json"
    records = [_record(0, **{"gpt-4o_answer": "old answer", "gpt-4o_score": -1}), _record(1)]
    path.write_text(json.dumps(records, indent=2))
    items = load_questions(path)
    assert [it["question_id"] for it in items] == ["0", "1"]
    assert items[0]["meta"] == {"gpt-4o_answer": "old answer", "gpt-4o_score": -1}
    assert items[1]["meta"] == {}
    assert items[0]["correction"] == "Correction 0."


def test_jsonl_with_other_casings_of_categories(tmp_path):
    path = tmp_path / "questions.jsonl"
    rows = [
        _record(0, category="Inevitable Side Effect"),
        _record(1, category="No Symptom, No Disease"),
        _record(2, category="Others"),
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cats = [it["category"] for it in load_questions(path)]
    assert cats == ["inevitable side effect", "no symptoms means no disease", "other"]
    assert normalize_category("Underestimated Risk") == "underestimate risk"
    assert normalize_category("astrology") is None


def test_missing_correction_stops_naming_the_record(tmp_path):
    path = tmp_path / "q.json"
    bad = _record(7)
    del bad["example_assumption"]
    path.write_text(json.dumps([_record(0), bad]))
    with pytest.raises(InputError, match=r"record 2 \(id '7'\).*missing correction"):
        load_questions(path)


def test_missing_question_stops(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_record(0, example_question="  ")]))
    with pytest.raises(InputError, match="missing question"):
        load_questions(path)


def test_duplicate_ids_stop_naming_both_records(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_record(3), _record(4), _record(3)]))
    with pytest.raises(
        InputError, match=r"record 3 \(id '3'\): duplicate question id \(first in record 1\)"
    ):
        load_questions(path)


def test_unknown_category_stops(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_record(0, category="astrology")]))
    with pytest.raises(InputError, match="unknown category 'astrology'"):
        load_questions(path)


def test_myths_as_concatenated_pretty_printed_objects(tmp_path):
    path = tmp_path / "myth_treatment.jsonl"
    myths = [
        {"cancer": "Bladder cancer", "myth": "Only surgery.", "fact": "Not only.", "source": "u1"},
        {"cancer": "Lung cancer", "myth": "Untreatable.", "fact": "Treatable.", "source": "u2"},
    ]
    path.write_text("\n".join(json.dumps(m, indent=2) for m in myths) + "\n")
    loaded = load_myths(path)
    assert [m["cancer"] for m in loaded] == ["Bladder cancer", "Lung cancer"]
    assert [m["source_row"] for m in loaded] == [0, 1]


def test_myths_as_jsonl(tmp_path):
    path = tmp_path / "myths.jsonl"
    path.write_text(
        '{"cancer": "A", "myth": "m1", "fact": "f1", "source": "s"}\n'
        '{"cancer": "B", "myth": "m2", "fact": "f2", "source": "s", "note": "x"}\n'
    )
    loaded = load_myths(path)
    assert [m["myth"] for m in loaded] == ["m1", "m2"]
    assert loaded[1]["meta"] == {"note": "x"}


def test_broken_myth_stream_names_the_record(tmp_path):
    path = tmp_path / "myths.jsonl"
    path.write_text('{"cancer": "A", "myth": "m", "fact": "f"}\n{"cancer": "B", "myth": \n')
    with pytest.raises(InputError, match=r"record 2 \(line 2\)"):
        load_myths(path)


def test_myth_without_fact_stops(tmp_path):
    path = tmp_path / "myths.jsonl"
    path.write_text('{"cancer": "A", "myth": "m", "fact": ""}\n')
    with pytest.raises(InputError, match="record 1: missing fact"):
        load_myths(path)


def test_demo_questions_cover_seven_categories_and_three_generators():
    from pathlib import Path

    items = load_questions(Path(__file__).parents[2] / "resources/demo/cancer_myth/questions.json")
    assert len({it["category"] for it in items}) == 7
    assert {"gpt-4o", "claude-3-5-sonnet", "gemini-1.5-pro"} <= {it["from_model"] for it in items}
