"""Gold (entity, related entity) tuples for the 14 subtypes, derived from BRAT annotations.

The model sees one section at a time, so gold comes from one section too: an entity counts when
all its fragments lie in the section, and a related entity only when it lies there as well.
Relations are followed in either direction and filtered by the partner's entity type, because
annotators add symmetric relations (temporal ones in particular) either way round.

Shared rules (each subtype's own rules are documented beside its function):

- *experiencer*: mentions with ``ExperiencerVal`` family or others (family history) are excluded
  everywhere.
- *occurred*: a mention happened to the patient when its ``NegationModalityVal`` is not
  negated, planned_in_future or hypothetical_in_future (the default is affirmed; uncertain
  mentions are kept, as the prompts exclude only absent and potential ones).
- *datetime*: any temporal relation (HappensAtOnDuring, BeginsOnOrAt, EndsOnOrAt, HappensBefore,
  HappensAfter, HappensOverlapping, Temporal) to a ``Datetime`` entity; medications use
  BeginsOnOrAt for Begin and EndsOnOrAt for End only.
- *site*: ``SiteOf`` from a ``Site``, prefixed by the ``Laterality`` entities linked to that site
  by ``LateralityOfSite`` ("left breast"; two lateralities give "left, right breast", as in the
  prompt's example).
- *revealed date*: a tumour characteristic's date is its own temporal datetimes plus the
  datetimes of every test or procedure that revealed it (``TestOrProcedureReveals``).
- A field without any value is ``unknown``. Tuples of one subtype whose primary texts are equal
  after lower-casing are merged (field values united), so a symptom mentioned twice is one
  gold tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .brat import Document, Entity
from .sections import Section, entities_in
from .tasks import SUBTYPES, UNKNOWN

TEMPORAL = frozenset(
    {
        "HappensAtOnDuring",
        "BeginsOnOrAt",
        "EndsOnOrAt",
        "HappensBefore",
        "HappensAfter",
        "HappensOverlapping",
        "Temporal",
    }
)
TEST_TYPES = frozenset(
    {"TumorTest", "Radiology", "Pathology", "GenomicTest", "DiagnosticLabTest", "ProcedureName"}
)
RESULT_TYPES = frozenset({"TestResult", "RadPathResult", "GenomicTestResult", "LabTestResult"})
PROBLEM_TYPES = frozenset({"Symptom", "ClinicalCondition", "Allergy"})
NOT_OCCURRED = frozenset({"negated", "planned_in_future", "hypothetical_in_future"})
FUTURE = frozenset({"planned_in_future", "hypothetical_in_future"})
POTENTIAL = frozenset(
    {"hypothetical_in_future", "planned_in_future", "uncertain_in_present", "uncertain_in_past"}
)
CONTINUITY = {
    "continuing": "continuing",
    "finished": "finished",
    "discontinued_early": "discontinued early",
    "started": "started",
}


@dataclass
class GoldTuple:
    subtype: str
    primary: str
    fields: dict[str, list[str]] = field(default_factory=dict)


def norm(text: str) -> str:
    return " ".join(text.split())


def modality(e: Entity) -> str:
    return e.attributes.get("NegationModalityVal", "affirmed")


def is_patient(e: Entity) -> bool:
    return e.attributes.get("ExperiencerVal", "patient") == "patient"


def occurred(e: Entity) -> bool:
    return is_patient(e) and modality(e) not in NOT_OCCURRED


class SectionGraph:
    """Entities of one section and the relations between them, looked up in both directions."""

    def __init__(self, doc: Document, section: Section):
        self.doc = doc
        self.entities = {e.id: e for e in entities_in(doc, section)}
        self.links: dict[str, list[tuple[str, Entity]]] = {i: [] for i in self.entities}
        for rel in doc.relations:
            a, b = self.entities.get(rel.arg1), self.entities.get(rel.arg2)
            if a is None or b is None:
                continue
            self.links[a.id].append((rel.type, b))
            self.links[b.id].append((rel.type, a))

    def of_type(self, *types: str) -> list[Entity]:
        return sorted((e for e in self.entities.values() if e.type in types), key=_pos)

    def partners(self, e: Entity, rel_types, partner_types=None, keep=None) -> list[Entity]:
        found = {}
        for rtype, other in self.links[e.id]:
            if rtype not in rel_types:
                continue
            if partner_types is not None and other.type not in partner_types:
                continue
            if keep is not None and not keep(other):
                continue
            found[other.id] = other
        return sorted(found.values(), key=_pos)

    def datetimes(self, e: Entity, rel_types=TEMPORAL) -> list[str]:
        return _texts(self.partners(e, rel_types, {"Datetime"}))

    def sites(self, e: Entity) -> list[str]:
        out = []
        for site in self.partners(e, {"SiteOf"}, {"Site"}):
            lats = _texts(self.partners(site, {"LateralityOfSite"}, {"Laterality"}))
            out.append(f"{', '.join(lats)} {norm(site.text)}" if lats else norm(site.text))
        return _unique(out)

    def revealing_tests(self, e: Entity) -> list[Entity]:
        return self.partners(e, {"TestOrProcedureReveals"}, TEST_TYPES)

    def revealed_date(self, e: Entity) -> list[str]:
        dates = self.datetimes(e)
        for test in self.revealing_tests(e):
            dates += self.datetimes(test)
        return _unique(dates)

    def additional_testing(self, e: Entity) -> list[str]:
        """Tests planned or considered for a stage/TNM/grade (ConductedForProblem, future)."""
        return _texts(
            self.partners(
                e,
                {"TestOrProcedureConductedForProblem"},
                TEST_TYPES,
                keep=lambda t: modality(t) in FUTURE,
            )
        )

    def joined_text(self, a: Entity, b: Entity) -> str:
        """``a`` then ``b`` as written when only spaces separate them ("ER+", "ER positive")."""
        first, second = (a, b) if a.start <= b.start else (b, a)
        gap = self.doc.text[first.end : second.start]
        if first is a and (gap == "" or gap.isspace()):
            return norm(self.doc.text[first.start : second.end])
        return f"{norm(a.text)} {norm(b.text)}"


def _pos(e: Entity):
    return (e.start, e.end, e.id)


def _unique(values):
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def _texts(entities) -> list[str]:
    return _unique(norm(e.text) for e in entities)


# --- one function per subtype: (graph) -> list of GoldTuple ------------------------------------


def _symptoms(g: SectionGraph, attribute: str | None = None) -> list[GoldTuple]:
    """Symptom entities that occurred (see module rules); Datetime from temporal relations.

    ``symptoms_at_diagnosis`` keeps those with IsPresentOnFirstCancerDiagnosis = yes and
    ``symptoms_due_to_cancer`` those with IsCausedByDiagnosedCancer = yes (the default
    'unclear' does not qualify).
    """
    out = []
    for e in g.of_type("Symptom"):
        if not occurred(e) or (attribute and e.attributes.get(attribute) != "yes"):
            continue
        out.append(GoldTuple("", norm(e.text), {"Datetime": g.datetimes(e)}))
    return out


def symptoms(g):
    return _symptoms(g)


def symptoms_at_diagnosis(g):
    return _symptoms(g, "IsPresentOnFirstCancerDiagnosis")


def symptoms_due_to_cancer(g):
    return _symptoms(g, "IsCausedByDiagnosedCancer")


def _test_results(g: SectionGraph, e: Entity) -> list[str]:
    """ResultOfTest results, ProcedureDesc outcomes/margins, and non-negated revealed findings."""
    results = g.partners(e, {"ResultOfTest"}, RESULT_TYPES)
    results += g.partners(e, {"ProcedureDesc"}, {"ProcedureOutcome", "MarginStatus"})
    results += g.partners(
        e, {"TestOrProcedureReveals"}, None, keep=lambda x: x.type not in TEST_TYPES and occurred(x)
    )
    return _texts(sorted(results, key=_pos))


def _test_tuples(g: SectionGraph, entity_type: str) -> list[GoldTuple]:
    """Tuples for test or procedure mentions that occurred. Site: SiteOf (+laterality); Reason:
    the problems it was conducted for (TestOrProcedureConductedForProblem); Result: see
    `_test_results`."""
    return [
        GoldTuple(
            "",
            norm(e.text),
            {
                "Datetime": g.datetimes(e),
                "Site": g.sites(e),
                "Reason": _texts(g.partners(e, {"TestOrProcedureConductedForProblem"})),
                "Result": _test_results(g, e),
            },
        )
        for e in g.of_type(entity_type)
        if occurred(e)
    ]


def radiology(g):
    """Radiology mentions that occurred, with ResultOfTest results and non-negated findings
    they revealed (TestOrProcedureReveals) as results."""
    return _test_tuples(g, "Radiology")


def procedures(g):
    """ProcedureName mentions that occurred; as radiology, and Result also takes the procedure's
    ProcedureOutcome and MarginStatus modifiers (ProcedureDesc)."""
    return _test_tuples(g, "ProcedureName")


def genomics(g):
    """GenomicTest mentions that occurred; Result: ResultOfTest partners."""
    return [
        GoldTuple(
            "",
            norm(e.text),
            {
                "Datetime": g.datetimes(e),
                "Result": _texts(g.partners(e, {"ResultOfTest"}, RESULT_TYPES)),
            },
        )
        for e in g.of_type("GenomicTest")
        if occurred(e)
    ]


def biomarkers(g):
    """BiomarkerName mentions that occurred, carrying their result: one tuple per BiomarkerRel
    result, named as written ("ER+", "HER2 negative"); a name without result stands alone.
    Datetime: the revealed date."""
    out = []
    for e in g.of_type("BiomarkerName"):
        if not occurred(e):
            continue
        results = g.partners(e, {"BiomarkerRel"}, {"BiomarkerResult"})
        names = [g.joined_text(e, r) for r in results] or [norm(e.text)]
        for name in names:
            out.append(GoldTuple("", name, {"Datetime": g.revealed_date(e)}))
    return out


def histology(g):
    """Histology mentions that occurred; Datetime: the revealed date."""
    return [
        GoldTuple("", norm(e.text), {"Datetime": g.revealed_date(e)})
        for e in g.of_type("Histology")
        if occurred(e)
    ]


def metastasis(g):
    """Metastasis mentions that occurred. Site: SiteOf (+laterality); Procedure: the tests and
    procedures that revealed it; Datetime: the dates of those tests, else its own temporal
    datetimes (the prompt asks for the date of the revealing procedure)."""
    out = []
    for e in g.of_type("Metastasis"):
        if not occurred(e):
            continue
        tests = g.revealing_tests(e)
        dates = _unique(d for t in tests for d in g.datetimes(t)) or g.datetimes(e)
        out.append(
            GoldTuple(
                "",
                norm(e.text),
                {"Site": g.sites(e), "Procedure": _texts(tests), "Datetime": dates},
            )
        )
    return out


def _staging(g, etype):
    """Stage / TNM / Grade mentions that occurred; Datetime: the revealed date;
    AdditionalTesting: planned or hypothetical tests conducted for it."""
    return [
        GoldTuple(
            "",
            norm(e.text),
            {"Datetime": g.revealed_date(e), "AdditionalTesting": g.additional_testing(e)},
        )
        for e in g.of_type(etype)
        if occurred(e)
    ]


def stage(g):
    return _staging(g, "Stage")


def tnm(g):
    return _staging(g, "TNM")


def grade(g):
    return _staging(g, "Grade")


def _adverse_events(g, e, potential: bool) -> list[str]:
    caused = g.partners(e, {"ConditionOrTreatmentCausesProblem"}, PROBLEM_TYPES, keep=is_patient)
    if potential:
        return _texts(x for x in caused if modality(x) in POTENTIAL)
    stopped_for = g.partners(e, {"TreatmentDiscontinuedBecauseOf"}, PROBLEM_TYPES, keep=occurred)
    confirmed = [x for x in caused if modality(x) not in POTENTIAL | {"negated"}]
    return _texts(sorted(confirmed + stopped_for, key=_pos))


def prescribed_meds(g):
    """MedicationName and MedicationRegimen mentions prescribed to the patient: occurred, not planned
    (TreatmentContinuityVal), not supportive or other (TreatmentCategory; the prompt asks for
    cancer-directed drugs). Begin/End: BeginsOnOrAt/EndsOnOrAt datetimes; Reason:
    TreatmentAdministeredForProblem; Continuity: TreatmentContinuityVal (discontinued_early ->
    'discontinued early'; unclear or unset -> unknown); ConfirmedAdvEvent: problems it caused
    (ConditionOrTreatmentCausesProblem, affirmed) and problems it was stopped for
    (TreatmentDiscontinuedBecauseOf); PotentialAdvEvent: caused problems marked hypothetical,
    planned or uncertain."""
    out = []
    for e in g.of_type("MedicationName", "MedicationRegimen"):
        if not occurred(e) or e.attributes.get("TreatmentContinuityVal") == "planned":
            continue
        if e.attributes.get("TreatmentCategory", "AntiNeoPlastics") != "AntiNeoPlastics":
            continue
        continuity = CONTINUITY.get(e.attributes.get("TreatmentContinuityVal", ""))
        out.append(
            GoldTuple(
                "",
                norm(e.text),
                {
                    "Begin": g.datetimes(e, {"BeginsOnOrAt"}),
                    "End": g.datetimes(e, {"EndsOnOrAt"}),
                    "Reason": _texts(g.partners(e, {"TreatmentAdministeredForProblem"})),
                    "Continuity": [continuity] if continuity else [],
                    "ConfirmedAdvEvent": _adverse_events(g, e, potential=False),
                    "PotentialAdvEvent": _adverse_events(g, e, potential=True),
                },
            )
        )
    return out


def future_meds(g):
    """MedicationName, MedicationRegimen and TreatmentType (drug classes) mentions for the
    patient that are planned_in_future or hypothetical_in_future, or whose
    TreatmentContinuityVal is planned; supportive ones are left out. Consideration: 'hypothetical'
    for hypothetical_in_future, else 'planned'; PotentialAdvEvent: problems linked by
    ConditionOrTreatmentCausesProblem that are not negated."""
    out = []
    for e in g.of_type("MedicationName", "MedicationRegimen", "TreatmentType"):
        if not is_patient(e):
            continue
        planned = e.attributes.get("TreatmentContinuityVal") == "planned"
        if modality(e) not in FUTURE and not planned:
            continue
        if e.attributes.get("TreatmentCategory", "AntiNeoPlastics") != "AntiNeoPlastics":
            continue
        consideration = "hypothetical" if modality(e) == "hypothetical_in_future" else "planned"
        events = g.partners(
            e,
            {"ConditionOrTreatmentCausesProblem"},
            PROBLEM_TYPES,
            keep=lambda x: modality(x) != "negated",
        )
        out.append(
            GoldTuple(
                "",
                norm(e.text),
                {"Consideration": [consideration], "PotentialAdvEvent": _texts(events)},
            )
        )
    return out


DERIVATIONS: dict[str, Callable[[SectionGraph], list[GoldTuple]]] = {
    "symptoms": symptoms,
    "symptoms_at_diagnosis": symptoms_at_diagnosis,
    "symptoms_due_to_cancer": symptoms_due_to_cancer,
    "radiology": radiology,
    "procedures": procedures,
    "genomics": genomics,
    "biomarkers": biomarkers,
    "histology": histology,
    "metastasis": metastasis,
    "stage": stage,
    "tnm": tnm,
    "grade": grade,
    "prescribed_meds": prescribed_meds,
    "future_meds": future_meds,
}
assert set(DERIVATIONS) == set(SUBTYPES)


def merge_tuples(tuples: list[GoldTuple], subtype: str) -> list[GoldTuple]:
    """Merge tuples with the same lower-cased primary; every field gets ``unknown`` if empty."""
    merged: dict[str, GoldTuple] = {}
    for t in tuples:
        key = t.primary.lower()
        if key not in merged:
            merged[key] = GoldTuple(subtype, t.primary, {f: [] for f in SUBTYPES[subtype].fields})
        for f in SUBTYPES[subtype].fields:
            merged[key].fields[f] = _unique(merged[key].fields[f] + t.fields.get(f, []))
    for t in merged.values():
        for f, values in t.fields.items():
            if not values:
                t.fields[f] = [UNKNOWN]
    return list(merged.values())


def derive(doc: Document, section: Section, subtype: str) -> list[GoldTuple]:
    return merge_tuples(DERIVATIONS[subtype](SectionGraph(doc, section)), subtype)


def pair_string(primary: str, value: str) -> str:
    """The scored string of one (entity, related entity) pair."""
    return f"{norm(primary)} {norm(value)}"


def gold_rows(doc_id: str, section_name: str, subtype: str, tuples: list[GoldTuple]) -> list[dict]:
    rows = []
    for index, t in enumerate(tuples):
        for f in SUBTYPES[subtype].fields:
            for value in t.fields[f]:
                rows.append(
                    {
                        "doc_id": doc_id,
                        "section": section_name,
                        "subtype": subtype,
                        "field": f,
                        "value": pair_string(t.primary, value),
                        "tuple_index": index,
                        "primary": t.primary,
                        "field_value": value,
                    }
                )
    return rows
