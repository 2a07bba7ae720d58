"""BRAT reader and section finder on small hand-written fixtures."""

from __future__ import annotations

import pytest

from oncoeval.errors import InputError
from oncoeval.studies.coral.brat import find_documents, read_document, read_schema
from oncoeval.studies.coral.sections import find_sections
from tests.conftest import REPO

CONF = REPO / "resources" / "coral" / "annotation.conf"
TEXT = "HPI:\nLeft breast lump since May.\n\nA&P:\nNo pain.\n"


@pytest.fixture(scope="module")
def schema():
    return read_schema(CONF)


def write_pair(tmp_path, ann: str, text: str = TEXT, name: str = "n1"):
    (tmp_path / f"{name}.txt").write_text(text)
    (tmp_path / f"{name}.ann").write_text(ann)
    return tmp_path / f"{name}.txt", tmp_path / f"{name}.ann"


def test_schema_holds_table_s1_types_and_attribute_values(schema):
    assert {"Symptom", "Radiology", "BiomarkerResult", "MedicationName", "SectionSkip"} <= set(
        schema.entities
    )
    assert "Temporal" not in schema.entities  # a bucket ("!Temporal"), not a type
    assert {"SiteOf", "LateralityOfSite", "TestOrProcedureReveals", "BeginsOnOrAt"} <= set(
        schema.relations
    )
    assert "hypothetical_in_future" in schema.attributes["NegationModalityVal"]
    assert schema.attributes["IsCausedByDiagnosedCancer"] == {"yes", "no", "unclear"}


def test_reader_keeps_discontinuous_spans_attributes_and_equivalences(schema, tmp_path):
    # "Left breast lump": T3 joins "Left" and "lump" across "breast " (BRAT joins with a space)
    ann = (
        "T1\tSymptom 17 21\tlump\n"
        "T2\tSite 10 16\tbreast\n"
        "T3\tSymptom 5 9;17 21\tLeft lump\n"
        "T4\tDatetime 28 31\tMay\n"
        "R1\tHappensAtOnDuring Event:T1 Time:T4\n"
        "A1\tNegationModalityVal T3 uncertain_in_present\n"
        "*\tEquiv T1 T3\n"
        "E1\tSomething:T1\n"
        "#1\tAnnotatorNotes T1\tfree text\n"
    )
    doc = read_document(*write_pair(tmp_path, ann), schema)
    assert doc.entities["T3"].spans == [(5, 9), (17, 21)]
    assert (doc.entities["T3"].start, doc.entities["T3"].end) == (5, 21)
    assert doc.entities["T3"].attributes == {"NegationModalityVal": "uncertain_in_present"}
    # role names differ from Arg1/Arg2: the first is arg1 whatever it is called
    assert (doc.relations[0].type, doc.relations[0].arg1, doc.relations[0].arg2) == (
        "HappensAtOnDuring",
        "T1",
        "T4",
    )
    assert doc.equivalences == [["T1", "T3"]]


@pytest.mark.parametrize(
    "ann, message",
    [
        ("T1\tSymptom 17 21\tlamp\n", "line 1: T1 text 'lamp' differs from the note"),
        ("T1\tSymptom 17 21\tlump\nT2\tFeeling 5 9\tLeft\n", "line 2: unknown entity type"),
        (
            "T1\tSymptom 17 21\tlump\nR1\tSiteOf Arg1:T9 Arg2:T1\n",
            "line 2: relation R1 refers to missing entity T9",
        ),
        (
            "T1\tSymptom 17 21\tlump\nR1\tLooksLike Arg1:T1 Arg2:T1\n",
            "line 2: unknown relation type",
        ),
        (
            "T1\tSymptom 17 21\tlump\nA1\tNegationModalityVal T1 maybe\n",
            "line 2: attribute NegationModalityVal has no value 'maybe'",
        ),
        (
            "T1\tSymptom 17 21\tlump\nA1\tNegationModalityVal T7 negated\n",
            "line 2: attribute NegationModalityVal refers to missing entity T7",
        ),
        ("T1\tSymptom 17 99\tlump\n", "line 1: offsets 17-99 outside the text"),
    ],
)
def test_reader_stops_on_bad_annotations_naming_file_and_line(schema, tmp_path, ann, message):
    txt, ann_path = write_pair(tmp_path, ann)
    with pytest.raises(InputError) as err:
        read_document(txt, ann_path, schema)
    assert str(ann_path) in str(err.value)
    assert message in str(err.value)


def test_find_documents_requires_pairs(tmp_path):
    write_pair(tmp_path, "")
    (tmp_path / "orphan.txt").write_text("x")
    with pytest.raises(InputError, match="no .ann file"):
        find_documents(tmp_path)


def test_sections_from_headings_and_from_marker_entities(schema, tmp_path):
    doc = read_document(*write_pair(tmp_path, ""), schema)
    found = find_sections(doc, {"source": "headings"})
    assert found["hpi"].text == "Left breast lump since May."
    assert found["ap"].text == "No pain."
    assert doc.text[found["ap"].start : found["ap"].end] == "No pain."

    ann = "T1\tHistoryOfPresentIllness 5 32\tLeft breast lump since May.\n"
    doc = read_document(*write_pair(tmp_path, ann, name="n2"), schema)
    found = find_sections(doc, {"source": "entities"})
    assert set(found) == {"hpi"}  # no A&P marker: the section is missing, not invented
    assert found["hpi"].text == "Left breast lump since May."
