"""The published gold derivation rule by rule, against the clean one (one switch of GoldRules).

Each test is one hand-written note (its HPI section) with the gold tuples written out by hand:
first as the study's public code derives them (``PUBLISHED``), then, where the project's clean
derivation differs, with the one switch that makes the difference and with ``CLEAN``.
Offsets in the .ann lines are found from the entity text (its n-th occurrence) to keep the
notes readable; relation and attribute lines are written as in BRAT.
"""

from __future__ import annotations

from dataclasses import fields

from oncoeval.config import checks as oc
from oncoeval.studies.coral.brat import read_document, read_schema
from oncoeval.studies.coral.gold import CLEAN, PUBLISHED, GoldRules, derive, gold_rows
from oncoeval.studies.coral.sections import find_sections
from tests.conftest import REPO

SCHEMA = read_schema(REPO / "resources" / "coral" / "annotation.conf")


def sections_block(**given) -> dict:
    """The coral ``sections`` block as the workflow hands it on: the schema's defaults filled."""
    return oc.filled_study_block({"studies": {"coral": {"sections": given}}}, "coral")["sections"]


def brat(tmp_path, text: str, entities: list[str], lines: list[str] = ()):
    """Write ``<note>.txt/.ann``; an entity is ``"T1 Type surface"`` or ``"T1 Type surface #2"``."""
    text = "HPI:\n" + text + "\n"
    ann = []
    for spec in entities:
        ent_id, etype, rest = spec.split(" ", 2)
        surface, _, nth = rest.partition(" #")
        start = -1
        for _ in range(int(nth or 1)):
            start = text.index(surface, start + 1)
        ann.append(f"{ent_id}\t{etype} {start} {start + len(surface)}\t{surface}")
    ann += [line.replace(" ", "\t", 1) for line in lines]
    (tmp_path / "n.txt").write_text(text)
    (tmp_path / "n.ann").write_text("\n".join(ann) + "\n")
    doc = read_document(tmp_path / "n.txt", tmp_path / "n.ann", SCHEMA)
    return doc, find_sections(doc, sections_block(source="headings", names=["hpi"]))["hpi"]


def gold(note, subtype, rules: GoldRules = PUBLISHED) -> list[tuple[str, dict]]:
    return [(t.primary, t.fields) for t in derive(*note, subtype, rules)]


def only(**switch) -> GoldRules:
    return GoldRules(**switch)


def test_published_and_clean_differ_by_every_switch_and_nothing_else():
    assert all(not getattr(PUBLISHED, f.name) for f in fields(GoldRules))
    assert all(getattr(CLEAN, f.name) for f in fields(GoldRules))


def test_every_mention_is_a_tuple_and_family_or_negated_ones_are_not(tmp_path):
    note = brat(
        tmp_path,
        "A lump in May. Her mother had pain. No nausea. The lump grew in June.",
        [
            "T1 Symptom lump",
            "T2 Datetime May",
            "T3 Symptom pain",
            "T4 Symptom nausea",
            "T5 Symptom lump #2",
            "T6 Datetime June",
        ],
        [
            "R1 HappensAtOnDuring Arg1:T1 Arg2:T2",
            "R2 HappensAtOnDuring Arg1:T5 Arg2:T6",
            "A1 ExperiencerVal T3 family",
            "A2 NegationModalityVal T4 negated",
        ],
    )
    assert gold(note, "symptoms") == [
        ("lump", {"Datetime": ["May"]}),
        ("lump", {"Datetime": ["June"]}),
    ]
    merged = [("lump", {"Datetime": ["May", "June"]})]
    assert gold(note, "symptoms", only(merge_same_text=True)) == merged
    assert gold(note, "symptoms", CLEAN) == merged


def test_a_symptom_time_is_any_temporal_partner(tmp_path):
    note = brat(
        tmp_path,
        "Pain for 3 weeks, since age 50, worse on 01/02/2021.",
        ["T1 Symptom Pain", "T2 Duration 3 weeks", "T3 Age age 50", "T4 Datetime 01/02/2021"],
        [
            "R1 HappensOverlapping Arg1:T1 Arg2:T2",
            "R2 BeginsOnOrAt Arg1:T3 Arg2:T1",  # either direction
            "R3 HappensAtOnDuring Arg1:T1 Arg2:T4",
        ],
    )
    assert gold(note, "symptoms") == [("Pain", {"Datetime": ["3 weeks", "age 50", "01/02/2021"]})]
    assert gold(note, "symptoms", only(datetime_only=True)) == [
        ("Pain", {"Datetime": ["01/02/2021"]})
    ]


def test_negated_and_uncertain_findings_are_kept_with_a_prefix(tmp_path):
    note = brat(
        tmp_path,
        "Left breast CT on 03/2021 for pain showed no metastases, a possible nodule; a mass may "
        "appear later.",
        [
            "T1 Laterality Left",
            "T2 Site breast",
            "T3 Radiology CT",
            "T4 Datetime 03/2021",
            "T5 Symptom pain",
            "T6 Metastasis metastases",
            "T7 RadPathResult nodule",
            "T8 RadPathResult mass",
        ],
        [
            "R1 LateralityOfSite Arg1:T1 Arg2:T2",
            "R2 SiteOf Arg1:T2 Arg2:T3",
            "R3 HappensAtOnDuring Arg1:T3 Arg2:T4",
            "R4 TestOrProcedureConductedForProblem Arg1:T3 Arg2:T5",
            "R5 TestOrProcedureReveals Arg1:T3 Arg2:T6",
            "R6 ResultOfTest Arg1:T7 Arg2:T3",
            "R7 ResultOfTest Arg1:T8 Arg2:T3",
            "A1 NegationModalityVal T6 negated",
            "A2 NegationModalityVal T7 uncertain_in_present",
            "A3 NegationModalityVal T8 hypothetical_in_future",
        ],
    )
    ct = {
        "Datetime": ["03/2021"],
        "Site": ["Left breast"],  # the public code's laterality step, which never fired, fixed
        "Reason": ["pain"],
        "Result": ["no metastases", "uncertain nodule"],  # its "unertain" spelled right
    }
    assert gold(note, "radiology") == [("CT", ct)]
    clean = [("CT", {**ct, "Result": ["unknown"]})]
    assert gold(note, "radiology", only(asserted_findings_only=True)) == clean
    assert gold(note, "radiology", CLEAN) == clean
    # the negated metastasis is no metastasis tuple in either view
    assert gold(note, "metastasis") == gold(note, "metastasis", CLEAN) == []


def test_biomarkers_carry_their_results_into_names_and_test_results(tmp_path):
    note = brat(
        tmp_path,
        "Core biopsy on 04/10/2021: ER+, PR positive, HER2 negative.",
        [
            "T1 ProcedureName Core biopsy",
            "T2 Datetime 04/10/2021",
            "T3 BiomarkerName ER",
            "T4 BiomarkerResult +",
            "T5 BiomarkerName PR",
            "T6 BiomarkerResult positive",
            "T7 BiomarkerName HER2",
            "T8 BiomarkerResult negative",
        ],
        [
            "R1 HappensAtOnDuring Arg1:T1 Arg2:T2",
            "R2 TestOrProcedureReveals Arg1:T1 Arg2:T3",
            "R3 TestOrProcedureReveals Arg1:T1 Arg2:T5",
            "R4 TestOrProcedureReveals Arg1:T1 Arg2:T7",
            "R5 BiomarkerRel Arg1:T3 Arg2:T4",
            "R6 BiomarkerRel Arg1:T5 Arg2:T6",
            "R7 BiomarkerRel Arg1:T7 Arg2:T8",
        ],
    )
    biopsy = {"Datetime": ["04/10/2021"], "Site": ["unknown"], "Reason": ["unknown"]}
    assert gold(note, "procedures") == [
        ("Core biopsy", {**biopsy, "Result": ["ER +", "PR positive", "HER2 negative"]})
    ]
    date = {"Datetime": ["04/10/2021"]}
    assert gold(note, "biomarkers") == [
        ("ER +", date),
        ("PR positive", date),
        ("HER2 negative", date),
    ]
    rows = gold_rows("n", "hpi", "procedures", derive(*note, "procedures"))
    assert [r["value"] for r in rows if r["field"] == "Result"] == [
        "Core biopsy ER +",
        "Core biopsy PR positive",
        "Core biopsy HER2 negative",
    ]
    as_written = only(biomarker_as_written=True)
    assert gold(note, "biomarkers", as_written) == [
        ("ER+", date),
        ("PR positive", date),
        ("HER2 negative", date),
    ]
    assert gold(note, "procedures", CLEAN) == [
        ("Core biopsy", {**biopsy, "Result": ["ER+", "PR positive", "HER2 negative"]})
    ]


def test_tumour_characteristics_take_the_revealing_tests_date(tmp_path):
    note = brat(
        tmp_path,
        "Adenocarcinoma suspected in 2019 was confirmed by biopsy on 03/2020. Liver metastasis "
        "seen in 05/2020.",
        [
            "T1 Histology Adenocarcinoma",
            "T2 Datetime 2019",
            "T3 Pathology biopsy",
            "T4 Datetime 03/2020",
            "T5 Site Liver",
            "T6 Metastasis metastasis",
            "T7 Datetime 05/2020",
        ],
        [
            "R1 HappensAtOnDuring Arg1:T1 Arg2:T2",
            "R2 TestOrProcedureReveals Arg1:T3 Arg2:T1",
            "R3 HappensAtOnDuring Arg1:T3 Arg2:T4",
            "R4 SiteOf Arg1:T5 Arg2:T6",
            "R5 HappensAtOnDuring Arg1:T6 Arg2:T7",
        ],
    )
    assert gold(note, "histology") == [("Adenocarcinoma", {"Datetime": ["03/2020"]})]
    assert gold(note, "histology", only(own_date=True)) == [
        ("Adenocarcinoma", {"Datetime": ["2019", "03/2020"]})
    ]
    # no test revealed the metastasis: published has no date, clean falls back on its own
    metastasis = {"Site": ["Liver"], "Procedure": ["unknown"]}
    assert gold(note, "metastasis") == [("metastasis", {**metastasis, "Datetime": ["unknown"]})]
    assert gold(note, "metastasis", CLEAN) == [
        ("metastasis", {**metastasis, "Datetime": ["05/2020"]})
    ]


def test_happens_after_and_before_give_begin_and_end_and_started_is_continuing(tmp_path):
    note = brat(
        tmp_path,
        "Letrozole after 01/2020, begun 02/2020, and before 06/2020.",
        [
            "T1 MedicationName Letrozole",
            "T2 Datetime 01/2020",
            "T3 Datetime 02/2020",
            "T4 Datetime 06/2020",
        ],
        [
            "R1 HappensAfter Arg1:T1 Arg2:T2",
            "R2 BeginsOnOrAt Arg1:T1 Arg2:T3",
            "R3 HappensBefore Arg1:T1 Arg2:T4",
            "A1 TreatmentContinuityVal T1 started",
        ],
    )
    med = {
        "Reason": ["unknown"],
        "Continuity": ["continuing"],  # the prompt allows no 'started': both views map it
        "ConfirmedAdvEvent": ["unknown"],
        "PotentialAdvEvent": ["unknown"],
    }
    assert gold(note, "prescribed_meds") == [
        ("Letrozole", {"Begin": ["01/2020", "02/2020"], "End": ["06/2020"], **med})
    ]
    exact = [("Letrozole", {"Begin": ["02/2020"], "End": ["unknown"], **med})]
    assert gold(note, "prescribed_meds", only(exact_begin_end=True)) == exact
    assert gold(note, "prescribed_meds", CLEAN) == exact


def test_medication_filters_uncertain_planned_and_supportive(tmp_path):
    note = brat(
        tmp_path,
        "She may have taken tamoxifen. Letrozole is planned. Ondansetron for nausea.",
        [
            "T1 MedicationName tamoxifen",
            "T2 MedicationName Letrozole",
            "T3 MedicationName Ondansetron",
        ],
        [
            "A1 NegationModalityVal T1 uncertain_in_past",
            "A2 NegationModalityVal T2 planned_in_future",
            "A3 TreatmentCategory T3 Supportive",
        ],
    )
    unknowns = dict.fromkeys(
        ["Begin", "End", "Reason", "Continuity", "ConfirmedAdvEvent", "PotentialAdvEvent"],
        ["unknown"],
    )
    # published: the uncertain drug is left out, the planned one is a future medication only
    assert gold(note, "prescribed_meds") == []
    future = [("Letrozole", {"Consideration": ["planned"], "PotentialAdvEvent": ["unknown"]})]
    assert gold(note, "future_meds") == future
    occurred = [("tamoxifen", unknowns)]
    assert gold(note, "prescribed_meds", only(occurred_meds=True)) == occurred
    assert gold(note, "prescribed_meds", CLEAN) == occurred
    assert gold(note, "future_meds", CLEAN) == future


def test_planned_or_hypothetical_medications_are_future_only_in_both_views(tmp_path):
    """Issue #24, item 7: the public treatment reader's if / elif / else; one drug of each kind."""
    note = brat(
        tmp_path,
        "She takes anastrozole. Capecitabine is planned. Palbociclib may be added later. "
        "Letrozole will start next month. She may have had tamoxifen. No exemestane.",
        [
            "T1 MedicationName anastrozole",
            "T2 MedicationName Capecitabine",
            "T3 MedicationName Palbociclib",
            "T4 MedicationName Letrozole",
            "T5 MedicationName tamoxifen",
            "T6 MedicationName exemestane",
        ],
        [
            "A1 TreatmentContinuityVal T1 continuing",
            "A2 NegationModalityVal T2 planned_in_future",
            "A3 NegationModalityVal T3 hypothetical_in_future",
            "A4 TreatmentContinuityVal T4 planned",
            "A5 NegationModalityVal T5 uncertain_in_past",
            "A6 NegationModalityVal T6 negated",
        ],
    )
    taken = {
        "Begin": ["unknown"],
        "End": ["unknown"],
        "Reason": ["unknown"],
        "Continuity": ["continuing"],
        "ConfirmedAdvEvent": ["unknown"],
        "PotentialAdvEvent": ["unknown"],
    }
    future = [
        ("Capecitabine", {"Consideration": ["planned"], "PotentialAdvEvent": ["unknown"]}),
        ("Palbociclib", {"Consideration": ["hypothetical"], "PotentialAdvEvent": ["unknown"]}),
        ("Letrozole", {"Consideration": ["planned"], "PotentialAdvEvent": ["unknown"]}),
    ]
    # published: only the drug she takes is prescribed; the uncertain and negated ones are in
    # neither list
    assert gold(note, "prescribed_meds") == [("anastrozole", taken)]
    assert gold(note, "future_meds") == future
    # clean keeps its own rule for the uncertain one (it may have been given), never a future one
    uncertain = {**taken, "Continuity": ["unknown"]}
    assert gold(note, "prescribed_meds", CLEAN) == [
        ("anastrozole", taken),
        ("tamoxifen", uncertain),
    ]
    assert gold(note, "future_meds", CLEAN) == future


def test_adverse_events_split_by_the_partners_assertion(tmp_path):
    note = brat(
        tmp_path,
        "On capecitabine she had diarrhea, no rash, possible fatigue; stopped for neuropathy. "
        "It may cause hand-foot syndrome.",
        [
            "T1 MedicationName capecitabine",
            "T2 Symptom diarrhea",
            "T3 Symptom rash",
            "T4 Symptom fatigue",
            "T5 Symptom neuropathy",
            "T6 ClinicalCondition hand-foot syndrome",
        ],
        [
            "R1 ConditionOrTreatmentCausesProblem Arg1:T1 Arg2:T2",
            "R2 ConditionOrTreatmentCausesProblem Arg1:T1 Arg2:T3",
            "R3 ConditionOrTreatmentCausesProblem Arg1:T1 Arg2:T4",
            "R4 TreatmentDiscontinuedBecauseOf Arg1:T1 Arg2:T5",
            "R5 ConditionOrTreatmentCausesProblem Arg1:T1 Arg2:T6",
            "A1 NegationModalityVal T3 negated",
            "A2 NegationModalityVal T4 uncertain_in_present",
            "A3 NegationModalityVal T6 hypothetical_in_future",
            "A4 TreatmentContinuityVal T1 discontinued_early",
        ],
    )
    med = {"Begin": ["unknown"], "End": ["unknown"], "Reason": ["unknown"]}
    med["Continuity"] = ["discontinued early"]
    assert gold(note, "prescribed_meds") == [
        (
            "capecitabine",
            {
                **med,
                "ConfirmedAdvEvent": ["diarrhea", "neuropathy"],  # no trailing newline
                "PotentialAdvEvent": ["rash", "fatigue", "hand-foot syndrome"],
            },
        )
    ]
    clean = [
        (
            "capecitabine",
            {
                **med,
                "ConfirmedAdvEvent": ["diarrhea", "neuropathy"],
                "PotentialAdvEvent": ["fatigue", "hand-foot syndrome"],  # negated rash dropped
            },
        )
    ]
    assert gold(note, "prescribed_meds", only(adverse_events_by_assertion=True)) == clean
    assert gold(note, "prescribed_meds", CLEAN) == clean


def test_treatment_types_are_future_medications_only_in_the_clean_view(tmp_path):
    note = brat(
        tmp_path,
        "We will consider chemotherapy.",
        ["T1 TreatmentType chemotherapy"],
        ["A1 NegationModalityVal T1 hypothetical_in_future"],
    )
    assert gold(note, "future_meds") == []
    expected = [
        ("chemotherapy", {"Consideration": ["hypothetical"], "PotentialAdvEvent": ["unknown"]})
    ]
    assert gold(note, "future_meds", only(treatment_type_future=True)) == expected
    assert gold(note, "future_meds", CLEAN) == expected


def test_additional_testing_is_scored_only_in_the_clean_view(tmp_path):
    note = brat(
        tmp_path,
        "Stage IV; a FISH test is planned.",
        ["T1 Stage IV", "T2 DiagnosticLabTest FISH test"],
        [
            "R1 TestOrProcedureConductedForProblem Arg1:T2 Arg2:T1",
            "A1 NegationModalityVal T2 planned_in_future",
        ],
    )
    published = derive(*note, "stage")
    assert [(t.primary, t.fields) for t in published] == [
        ("IV", {"Datetime": ["unknown"], "AdditionalTesting": ["unknown"]})
    ]
    assert [r["value"] for r in gold_rows("n", "hpi", "stage", published)] == ["IV unknown"]
    clean = derive(*note, "stage", CLEAN)
    assert clean[0].fields["AdditionalTesting"] == ["FISH test"]
    rows = gold_rows("n", "hpi", "stage", clean, "clean")
    assert [(r["field"], r["value"]) for r in rows] == [
        ("Datetime", "IV unknown"),
        ("AdditionalTesting", "IV FISH test"),
    ]


def test_published_gold_of_a_demo_note_for_every_subtype():
    """breast_01 (resources/demo/coral/notes), its HPI and A&P, every subtype, by hand."""
    notes = REPO / "resources" / "demo" / "coral" / "notes"
    doc = read_document(notes / "breast_01.txt", notes / "breast_01.ann", SCHEMA)
    sections = find_sections(doc, sections_block(source="headings"))
    got = {
        (name, subtype): [(t.primary, t.fields) for t in derive(doc, sec, subtype)]
        for name, sec in sections.items()
        for subtype in ("symptoms", "symptoms_at_diagnosis", "symptoms_due_to_cancer")
        + ("radiology", "procedures", "genomics", "biomarkers", "histology", "metastasis")
        + ("stage", "tnm", "grade", "prescribed_meds", "future_meds")
    }
    u = ["unknown"]
    biopsy_date = {"Datetime": ["04/10/2021"]}
    surgery = {"Datetime": ["05/20/2021"], "AdditionalTesting": u}
    expected = {
        ("hpi", "symptoms"): [
            ("lump", {"Datetime": ["March 2021"]}),
            ("hot flashes", {"Datetime": u}),  # "She denies bone pain": negated, left out
        ],
        ("hpi", "symptoms_at_diagnosis"): [("lump", {"Datetime": ["March 2021"]})],
        ("hpi", "symptoms_due_to_cancer"): [("lump", {"Datetime": ["March 2021"]})],
        ("hpi", "radiology"): [
            (
                "mammogram",
                {
                    "Datetime": ["04/02/2021"],
                    "Site": ["left breast"],
                    "Reason": ["lump"],
                    "Result": ["2.1 cm mass"],
                },
            )
        ],
        ("hpi", "procedures"): [  # margins (ProcedureDesc) and what it revealed
            (
                "lumpectomy",
                {
                    "Datetime": ["05/20/2021"],
                    "Site": ["left"],
                    "Reason": ["carcinoma"],
                    "Result": ["negative", "IA", "pT1cN0"],
                },
            )
        ],
        ("hpi", "genomics"): [
            ("Oncotype DX", {"Datetime": ["05/01/2021"], "Result": ["low recurrence score"]})
        ],
        ("hpi", "biomarkers"): [
            ("ER +", biopsy_date),
            ("PR +", biopsy_date),
            ("HER2 negative", biopsy_date),
        ],
        ("hpi", "histology"): [
            ("invasive ductal carcinoma", biopsy_date),
            ("carcinoma", {"Datetime": u}),  # the lumpectomy's reason, revealed by no test
        ],
        ("hpi", "metastasis"): [],
        ("hpi", "stage"): [("IA", surgery)],
        ("hpi", "tnm"): [("pT1cN0", surgery)],
        ("hpi", "grade"): [("2", {**biopsy_date, "AdditionalTesting": u})],
        ("hpi", "prescribed_meds"): [
            (
                "anastrozole",
                {
                    "Begin": ["06/15/2021"],
                    "End": u,
                    "Reason": ["invasive ductal carcinoma"],
                    "Continuity": ["continuing"],
                    "ConfirmedAdvEvent": ["hot flashes"],
                    "PotentialAdvEvent": u,
                },
            )
        ],
        ("hpi", "future_meds"): [],
        ("ap", "symptoms"): [("hot flashes", {"Datetime": u})],
        ("ap", "stage"): [("IA", {"Datetime": u, "AdditionalTesting": u})],
        ("ap", "prescribed_meds"): [
            (
                "anastrozole",
                {"Begin": u, "End": u, "Reason": ["cancer"], "Continuity": ["continuing"]}
                | {"ConfirmedAdvEvent": ["hot flashes"], "PotentialAdvEvent": u},
            ),
            (
                "anastrozole",
                {"Begin": u, "End": u, "Reason": u, "Continuity": ["continuing"]}
                | {"ConfirmedAdvEvent": u, "PotentialAdvEvent": ["bone loss"]},
            ),
            # tamoxifen is hypothetical: a future medication only (the public treatment reader)
        ],
        ("ap", "future_meds"): [
            ("tamoxifen", {"Consideration": ["hypothetical"], "PotentialAdvEvent": u})
        ],
    }
    for key, tuples in got.items():
        assert tuples == expected.get(key, []), key
