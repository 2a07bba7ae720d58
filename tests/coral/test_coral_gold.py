"""The clean gold derivation per subtype, checked on the hand-annotated demo notes.

(The published derivation, rule by rule against the clean one, is in test_coral_gold_rules.py.)
"""

from __future__ import annotations

import pytest

from oncoeval.config import checks as oc
from oncoeval.studies.coral.brat import read_document, read_schema
from oncoeval.studies.coral.gold import CLEAN, GOLD_VIEWS, derive, gold_rows, scored_fields
from oncoeval.studies.coral.sections import find_sections
from oncoeval.studies.coral.tasks import SUBTYPES
from tests.conftest import REPO

NOTES = REPO / "resources" / "demo" / "coral" / "notes"
SCHEMA = read_schema(REPO / "resources" / "coral" / "annotation.conf")


def sections_block(**given) -> dict:
    """The coral ``sections`` block as the workflow hands it on: the schema's defaults filled."""
    return oc.filled_study_block({"studies": {"coral": {"sections": given}}}, "coral")["sections"]


def gold(doc_id: str, section: str, subtype: str) -> dict[str, dict[str, list[str]]]:
    doc = read_document(NOTES / f"{doc_id}.txt", NOTES / f"{doc_id}.ann", SCHEMA)
    sec = find_sections(doc, sections_block(source="headings"))[section]
    return {t.primary: t.fields for t in derive(doc, sec, subtype, CLEAN)}


def test_symptoms_exclude_negated_and_keep_datetime_or_unknown():
    # "She denies bone pain." is negated; hot flashes have no date
    assert gold("breast_01", "hpi", "symptoms") == {
        "lump": {"Datetime": ["March 2021"]},
        "hot flashes": {"Datetime": ["unknown"]},
    }
    # "No nausea." in the A&P is negated too
    assert "nausea" not in gold("pancreas_02", "ap", "symptoms")


def test_symptoms_at_diagnosis_and_due_to_cancer_follow_their_attributes():
    assert gold("pancreas_01", "hpi", "symptoms_at_diagnosis") == {
        "jaundice": {"Datetime": ["June 2020"]},
        "weight loss": {"Datetime": ["June 2020"]},
    }
    # neuropathy was caused by FOLFIRINOX (IsCausedByDiagnosedCancer = no)
    assert set(gold("pancreas_01", "hpi", "symptoms_due_to_cancer")) == {"jaundice", "weight loss"}
    assert set(gold("pancreas_02", "ap", "symptoms_due_to_cancer")) == {"Epigastric pain"}


def test_radiology_site_with_laterality_reason_result_and_planned_test_excluded():
    assert gold("breast_01", "hpi", "radiology") == {
        "mammogram": {
            "Datetime": ["04/02/2021"],
            "Site": ["left breast"],
            "Reason": ["lump"],
            "Result": ["2.1 cm mass"],
        }
    }
    # the DEXA scan is planned_in_future: not a radiology test done
    assert gold("breast_01", "ap", "radiology") == {}
    # results from ResultOfTest, two of them
    assert gold("pancreas_02", "hpi", "radiology")["MRI"]["Result"] == [
        "pancreatic body mass",
        "liver lesions",
    ]


def test_procedures_take_margins_and_revealed_findings_as_results():
    whipple = gold("pancreas_01", "hpi", "procedures")["Whipple procedure"]
    assert whipple == {
        "Datetime": ["09/15/2020"],
        "Site": ["unknown"],
        "Reason": ["pancreatic head mass"],
        "Result": ["ypT3N1", "3", "negative"],
    }
    biopsy = gold("pancreas_02", "hpi", "procedures")["biopsy"]
    assert biopsy["Site"] == ["Liver"] and biopsy["Result"] == ["metastatic", "adenocarcinoma"]


def test_genomics_results_through_result_of_test():
    assert gold("breast_02", "hpi", "genomics") == {
        "Germline BRCA testing": {"Datetime": ["unknown"], "Result": ["negative"]}
    }


def test_biomarkers_carry_their_result_and_the_date_of_the_revealing_biopsy():
    assert gold("breast_01", "hpi", "biomarkers") == {
        "ER+": {"Datetime": ["04/10/2021"]},
        "PR+": {"Datetime": ["04/10/2021"]},
        "HER2 negative": {"Datetime": ["04/10/2021"]},
    }


def test_histology_date_through_revealing_test():
    assert gold("pancreas_01", "hpi", "histology") == {
        "adenocarcinoma": {"Datetime": ["07/01/2020"]}
    }


def test_metastasis_site_procedure_datetime_and_negated_mention_excluded():
    assert gold("breast_02", "hpi", "metastasis") == {
        "metastases": {
            "Site": ["bone", "spine"],
            "Procedure": ["PET/CT"],
            "Datetime": ["08/12/2022"],
        }
    }
    # "No evidence of brain metastasis" is negated; "Metastatic ... to bone" stays
    assert gold("breast_02", "ap", "metastasis") == {
        "Metastatic": {"Site": ["bone"], "Procedure": ["unknown"], "Datetime": ["unknown"]}
    }
    # two mentions of "metastatic" merge: the second has site, biopsy and date
    assert gold("pancreas_02", "hpi", "metastasis") == {
        "metastatic": {"Site": ["Liver"], "Procedure": ["biopsy"], "Datetime": ["11/10/2021"]}
    }


def test_stage_tnm_grade_dates_and_planned_additional_testing():
    assert gold("breast_01", "hpi", "stage") == {
        "IA": {"Datetime": ["05/20/2021"], "AdditionalTesting": ["unknown"]}
    }
    assert gold("breast_02", "ap", "stage") == {
        "IV": {"Datetime": ["unknown"], "AdditionalTesting": ["FISH"]}
    }
    assert gold("pancreas_01", "hpi", "tnm") == {
        "ypT3N1": {"Datetime": ["09/15/2020"], "AdditionalTesting": ["unknown"]}
    }
    assert gold("breast_01", "hpi", "grade") == {
        "2": {"Datetime": ["04/10/2021"], "AdditionalTesting": ["unknown"]}
    }


def test_prescribed_meds_begin_end_continuity_and_adverse_events():
    meds = gold("breast_02", "hpi", "prescribed_meds")
    assert meds["doxorubicin"] == {
        "Begin": ["02/2019"],
        "End": ["05/2019"],
        "Reason": ["cancer"],
        "Continuity": ["discontinued early"],
        "ConfirmedAdvEvent": ["neutropenia"],  # stopped because of it
        "PotentialAdvEvent": ["unknown"],
    }
    ap = gold("breast_01", "ap", "prescribed_meds")["anastrozole"]  # two mentions merged
    assert ap["ConfirmedAdvEvent"] == ["hot flashes"] and ap["PotentialAdvEvent"] == ["bone loss"]
    # planned and hypothetical drugs are future, supportive oxycodone is not cancer-directed
    assert "tamoxifen" not in gold("breast_01", "ap", "prescribed_meds")
    assert set(gold("pancreas_02", "ap", "prescribed_meds")) == {"gemcitabine", "nab-paclitaxel"}
    assert gold("pancreas_01", "hpi", "prescribed_meds")["FOLFIRINOX"]["Continuity"] == ["finished"]


def test_future_meds_planned_and_hypothetical_with_potential_events():
    assert gold("breast_02", "ap", "future_meds") == {
        "palbociclib": {"Consideration": ["planned"], "PotentialAdvEvent": ["neutropenia"]},
        "letrozole": {"Consideration": ["planned"], "PotentialAdvEvent": ["unknown"]},
    }
    assert gold("breast_01", "ap", "future_meds") == {
        "tamoxifen": {"Consideration": ["hypothetical"], "PotentialAdvEvent": ["unknown"]}
    }


def test_family_history_and_hypothetical_mentions_are_not_the_patients(tmp_path):
    text = "HPI:\nHer mother had breast pain. She may get nausea. ER was positive.\n"
    ann = (
        "T1\tSymptom 20 31\tbreast pain\n"
        "A1\tExperiencerVal T1 family\n"
        "T2\tSymptom 45 51\tnausea\n"
        "A2\tNegationModalityVal T2 hypothetical_in_future\n"
        "T3\tBiomarkerName 53 55\tER\n"
        "T4\tBiomarkerResult 60 68\tpositive\n"
        "R1\tBiomarkerRel Arg1:T3 Arg2:T4\n"
    )
    (tmp_path / "f.txt").write_text(text)
    (tmp_path / "f.ann").write_text(ann)
    doc = read_document(tmp_path / "f.txt", tmp_path / "f.ann", SCHEMA)
    sec = find_sections(doc, sections_block(source="headings", names=["hpi"]))["hpi"]
    assert derive(doc, sec, "symptoms") == []
    # "was" lies between name and result, so they are joined with one space
    assert [t.primary for t in derive(doc, sec, "biomarkers")] == ["ER positive"]


@pytest.mark.parametrize("subtype", list(SUBTYPES))
def test_gold_rows_pair_the_primary_with_every_field_value(subtype):
    doc = read_document(NOTES / "breast_02.txt", NOTES / "breast_02.ann", SCHEMA)
    for name, sec in find_sections(doc, sections_block(source="headings")).items():
        for view, rules in GOLD_VIEWS.items():
            tuples = derive(doc, sec, subtype, rules)
            rows = gold_rows("breast_02", name, subtype, tuples, view)
            fields = scored_fields(subtype, rules)
            assert len(rows) == sum(len(t.fields[f]) for t in tuples for f in fields)
            for row in rows:
                assert row["value"] == f"{row['primary']} {row['field_value']}"
                assert row["field"] in fields and row["view"] == view
    # AdditionalTesting is never scored in the published view, and is in the clean one
    assert "AdditionalTesting" not in scored_fields("stage", GOLD_VIEWS["published"])
    assert "AdditionalTesting" in scored_fields("stage", CLEAN)


def test_prepare_reports_a_missing_section_and_reads_metadata(tmp_path):
    from oncoeval.core.errors import InputError
    from oncoeval.studies.coral.prepare import prepare
    from oncoeval.studies.coral.requests import build_requests

    (tmp_path / "n1.txt").write_text("HISTORY OF PRESENT ILLNESS:\nA lump.\n")
    (tmp_path / "n1.ann").write_text("T1\tSymptom 30 34\tlump\n")
    meta = tmp_path / "meta.tsv"
    meta.write_text("doc_id\tcancer_type\tgender\nn1\tbreast\tFemale\n")
    conf = REPO / "resources" / "coral" / "annotation.conf"
    items, report, gold = prepare(tmp_path, conf, meta, sections_block(source="headings"))
    assert report[["section", "found"]].values.tolist() == [["hpi", True], ["ap", False]]
    assert items[0]["gender"] == "Female" and items[0]["race_ethnicity"] == ""
    symptoms = gold[gold["subtype"] == "symptoms"]
    assert symptoms[["view", "value"]].values.tolist() == [
        ["published", "lump unknown"],
        ["clean", "lump unknown"],
    ]
    requests = build_requests(
        items, ["symptoms"], REPO / "config" / "prompts" / "coral", {"temperature": 0}
    )
    assert [r.request_id for r in requests] == ["n1|hpi|symptoms"]  # no request for the A&P
    system, user = requests[0].messages
    assert system["content"].startswith("Pretend you are an oncologist.")
    assert user["content"].startswith("A lump.\n\nFor this note, please return all symptoms")
    assert user["content"].endswith("Do not return any explanation.")

    meta.write_text("doc_id\tcancer_type\nn9\tbreast\n")
    with pytest.raises(InputError, match="doc_id values without a note"):
        prepare(tmp_path, conf, meta, sections_block(source="headings"))


def test_a_capped_run_keeps_the_first_notes_and_only_their_rows():
    from oncoeval.studies.coral.prepare import first_notes, prepare

    demo = REPO / "resources" / "demo" / "coral"
    conf = REPO / "resources" / "coral" / "annotation.conf"
    whole = prepare(demo / "notes", conf, demo / "metadata.tsv", sections_block(source="headings"))
    items, report, gold = whole
    assert len(items) > 2
    first = items[0]["doc_id"]
    one_items, one_report, one_gold = first_notes(*whole, limit=1)
    assert [i["doc_id"] for i in one_items] == [first]
    assert set(one_report["doc_id"]) == {first} and set(one_gold["doc_id"]) == {first}
    assert one_report.equals(report[report["doc_id"] == first])
    assert len(one_gold) == (gold["doc_id"] == first).sum() > 0
    assert first_notes(*whole, limit=0) == whole  # no cap: the very same tables
    assert first_notes(*whole, limit=len(items) + 5)[0] == items


SHARED = REPO.parent.parent / "shared" / "data" / "coral"


@pytest.mark.skipif(not SHARED.is_dir(), reason="no CORAL corpus under ../shared/data/coral")
def test_shared_corpus_reads_and_derives_gold_when_present():
    from oncoeval.studies.coral.prepare import prepare

    items, report, gold = prepare(
        SHARED, REPO / "resources/coral/annotation.conf", None, sections_block()
    )
    assert items and set(gold["subtype"]) <= set(SUBTYPES)
