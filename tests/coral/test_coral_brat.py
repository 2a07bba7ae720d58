"""BRAT reader and section finder on small hand-written fixtures."""

from __future__ import annotations

import pytest

from oncoeval.config import checks as oc
from oncoeval.core.errors import InputError
from oncoeval.studies.coral.brat import find_documents, read_document, read_schema
from oncoeval.studies.coral.sections import find_sections
from tests.conftest import REPO

CONF = REPO / "resources" / "coral" / "annotation.conf"
TEXT = "HPI:\nLeft breast lump since May.\n\nA&P:\nNo pain.\n"


def sections_block(**given) -> dict:
    """The coral ``sections`` block as the workflow hands it on: the schema's defaults filled."""
    return oc.filled_study_block({"studies": {"coral": {"sections": given}}}, "coral")["sections"]


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
    found = find_sections(doc, sections_block(source="headings"))
    assert found["hpi"].text == "Left breast lump since May."
    assert found["ap"].text == "No pain."
    assert doc.text[found["ap"].start : found["ap"].end] == "No pain."

    ann = "T1\tHistoryOfPresentIllness 5 32\tLeft breast lump since May.\n"
    doc = read_document(*write_pair(tmp_path, ann, name="n2"), schema)
    found = find_sections(doc, sections_block(source="entities"))
    assert set(found) == {"hpi"}  # no A&P marker: the section is missing, not invented
    assert found["hpi"].text == "Left breast lump since May."


# A note as the released corpus has it: two HPI marker pairs, one A&P pair, pre-annotations
# (types absent from annotation.conf) and a SectionSkip region inside the A&P.
CORPUS_TEXT = (
    "HPI: Lump since May.\n"  # 0-21
    "Exam: normal.\n"  # 21-35
    "HPI cont: Pain in June.\n"  # 35-59
    "A&P: Exam reviewed. Start letrozole.\n"  # 59-96
)
CORPUS_ANN = "\n".join(
    [
        "T1\thpi_start 0 3\tHPI",
        "T2\thpi_end 16 20\tMay.",
        "T3\thpi_start 35 38\tHPI",
        "T4\thpi_end 53 57\tJune",
        "T5\tap_start 59 62\tA&P",
        "T6\tap_end 85 94\tletrozole",
        "T7\tSymptom 5 9\tLump",
        "T8\tSymptom 45 49\tPain",
        "T9\tSymptom 21 25\tExam",  # between the HPI pairs: in no section
        "T10\tMedicationName 85 94\tletrozole",
        "T11\tSectionSkip 64 79\tExam reviewed. ",
        "T12\tPROBLEM 5 9\tLump",
        "T13\tSectionAnnotate 0 20\tHPI: Lump since May.",
        "T14\tTREATMENT 85 94\tletrozole",
        "R1\tTemporal Arg1:T12 Arg2:T13",
        "A1\tNegationModalityVal T12 affirmed",
        "A2\tNegationModalityVal T7 affirmed",
    ]
)
MARKERS = sections_block(source="markers")


def test_pre_annotations_are_skipped_and_counted(schema, tmp_path):
    from oncoeval.studies.coral.sections import marker_types

    pair = write_pair(tmp_path, CORPUS_ANN, CORPUS_TEXT)
    doc = read_document(*pair, schema, marker_types(MARKERS))
    assert set(doc.entities) == {f"T{i}" for i in range(1, 12)}
    assert doc.relations == []
    assert dict(doc.skipped) == {
        "PROBLEM": 1,
        "SectionAnnotate": 1,
        "TREATMENT": 1,
        "relations to pre-annotations": 1,
        "attributes of pre-annotations": 1,
    }
    # section markers are not in annotation.conf: read with the heading source, they stop the run
    with pytest.raises(InputError) as err:
        read_document(*pair, schema, marker_types(sections_block(source="headings")))
    assert "line 1: unknown entity type 'hpi_start'" in str(err.value)
    assert "nor a section marker of the chosen sections.source" in str(err.value)


def test_marker_pairs_sort_starts_with_ends_and_keep_entities_inside(schema, tmp_path):
    from oncoeval.studies.coral.gold import derive
    from oncoeval.studies.coral.sections import entities_in, marker_types, skip_chars

    pair = write_pair(tmp_path, CORPUS_ANN, CORPUS_TEXT)
    doc = read_document(*pair, schema, marker_types(MARKERS))
    found = find_sections(doc, MARKERS)
    # spans [start, end marker's end + 1): the character after the end marker comes along
    assert found["hpi"].parts == ((0, 21), (35, 58))
    assert found["hpi"].text == "HPI: Lump since May.\nHPI cont: Pain in June."
    assert found["ap"].text == "A&P: Exam reviewed. Start letrozole."
    hpi_types = sorted(e.id for e in entities_in(doc, found["hpi"]) if e.type == "Symptom")
    assert hpi_types == ["T7", "T8"]  # "Exam" between the pairs is in no section
    assert [t.primary for t in derive(doc, found["hpi"], "symptoms")] == ["Lump", "Pain"]
    # the SectionSkip region stays in the A&P text (as in the public code) and is counted
    assert skip_chars(doc, found["ap"]) == 15 and skip_chars(doc, found["hpi"]) == 0


@pytest.mark.parametrize(
    "ann, message",
    [
        (
            "T1\thpi_start 0 3\tHPI\nT2\thpi_end 16 20\tMay.\nT3\thpi_start 35 38\tHPI\n",
            "line 3: section hpi: 2 hpi_start and 1 hpi_end markers do not pair up",
        ),
        (
            "T1\thpi_end 0 3\tHPI\nT2\thpi_start 16 20\tMay.\n",
            "line 1: section hpi: T1 hpi_end at 0 does not close T2 hpi_start at 16",
        ),
    ],
)
def test_unpaired_markers_stop_with_file_and_line(schema, tmp_path, ann, message):
    from oncoeval.studies.coral.sections import marker_types

    pair = write_pair(tmp_path, ann, CORPUS_TEXT)
    doc = read_document(*pair, schema, marker_types(MARKERS))
    with pytest.raises(InputError) as err:
        find_sections(doc, MARKERS)
    assert str(pair[1]) in str(err.value) and message in str(err.value)


def test_a_section_name_without_its_marker_pair_stops_before_any_note_is_read():
    from oncoeval.studies.coral.sections import marker_types

    settings = sections_block(source="markers", marker_pairs={"hpi": ["hpi_start", "hpi_end"]})
    with pytest.raises(ValueError, match=r"sections.marker_pairs has no entry for \['ap'\]"):
        marker_types(settings)
