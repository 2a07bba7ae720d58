"""Gold (entity, related entity) tuples for the 14 subtypes, derived from BRAT annotations.

The model sees one section at a time, so gold comes from one section too: an entity counts when
it lies fully inside the section, and a related entity only when it lies there as well. Relations
are followed in either direction (annotators add symmetric relations either way round).

Two derivations are written out, each as a :class:`GoldRules` value:

- ``PUBLISHED`` (every switch off) is what the study's public code derives, with only its
  documented defects corrected: laterality is joined into Site ("left breast"; the public code
  meant to and never did), adverse-event texts carry no trailing newline, and the uncertain prefix
  is spelled ``uncertain`` (the public code writes ``unertain``).
- ``CLEAN`` (every switch on) is this project's own reading of the prompts; each switch is one
  rule where it departs from the public code, documented on :class:`GoldRules`.

Rules of the published derivation:

- *primary filter*: a mention counts unless its ``ExperiencerVal`` is family or others, or its
  ``NegationModalityVal`` is negated, planned_in_future or hypothetical_in_future (medications
  use their own filter, below).
- *temporal*: the partners of any temporal relation (HappensAtOnDuring, BeginsOnOrAt, EndsOnOrAt,
  HappensBefore, HappensAfter, HappensOverlapping, Temporal), whatever their type (Datetime,
  Duration, Age...).
- *revealed date* (biomarker, histology, metastasis, stage, TNM, grade): the temporal partners of
  the tests or procedures that revealed the mention (``TestOrProcedureReveals``), not its own.
- *Reason/Result findings*: negated ones read ``no X``, uncertain ones ``uncertain X``,
  hypothetical ones are dropped.
- *biomarker names* read "name result" for every relation to a ``BiomarkerResult`` ("ER +",
  "HER2 negative"), wherever they appear (a biopsy's Result holds "ER positive").
- every mention is its own tuple (two mentions of "lump" are two tuples); a field without any
  value is ``unknown``.
- *medications* (MedicationName, MedicationRegimen; not Supportive or Others, not negated or
  uncertain): each is a future medication or a prescribed one, never both. A planned one
  (assertion ``planned_in_future`` or continuity ``planned``) is a future medication with
  Consideration ``planned``, else a hypothetical one (``hypothetical_in_future``) with
  ``hypothetical``, else it is prescribed (the public treatment reader's if / elif / else).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

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
BEGIN = frozenset({"BeginsOnOrAt", "HappensAfter"})
END = frozenset({"EndsOnOrAt", "HappensBefore"})
RESULT = frozenset({"ResultOfTest", "TestOrProcedureReveals"})
PROC_RESULT = RESULT | {"ProcedureDesc"}
ADVERSE = frozenset({"ConditionOrTreatmentCausesProblem", "TreatmentDiscontinuedBecauseOf"})
TEST_TYPES = frozenset(
    {"TumorTest", "Radiology", "Pathology", "GenomicTest", "DiagnosticLabTest", "ProcedureName"}
)
PROBLEM_TYPES = frozenset({"Symptom", "ClinicalCondition", "Allergy"})
NOT_OCCURRED = frozenset({"negated", "planned_in_future", "hypothetical_in_future"})
FUTURE = frozenset({"planned_in_future", "hypothetical_in_future"})
UNCERTAIN = frozenset({"uncertain_in_present", "uncertain_in_past"})
CONTINUITY = {"unclear": UNKNOWN, "started": "continuing"}  # others: "_" -> " "


@dataclass(frozen=True)
class GoldRules:
    """Switches of the gold derivation; all off is the published derivation.

    Each switch is one deliberate departure from the public code, made for the ``clean`` view:
    """

    #: Mentions of one subtype with the same lower-cased text are one tuple (fields united),
    #: since the prompts ask for each entity once. Published: one tuple per mention.
    merge_same_text: bool = False
    #: Temporal fields (dates, Begin, End) take only ``Datetime`` partners, as the prompts ask
    #: for dates. Published: any temporal partner (Duration and Age too).
    datetime_only: bool = False
    #: Reason and Result keep only findings that occurred (not negated, uncertain or
    #: hypothetical). Published: ``no X`` / ``uncertain X``; hypothetical ones dropped.
    asserted_findings_only: bool = False
    #: A biomarker reads as written when only spaces separate name and result ("ER+"), one
    #: tuple per result. Published: "name result" with a space, all results on one name.
    biomarker_as_written: bool = False
    #: A tumour characteristic's date includes its own temporal partners (metastasis: its own
    #: only when no revealing test has one). Published: only the revealing test's dates.
    own_date: bool = False
    #: Begin/End take only BeginsOnOrAt/EndsOnOrAt. Published: HappensAfter counts as Begin
    #: and HappensBefore as End.
    exact_begin_end: bool = False
    #: Prescribed medications are those that occurred, uncertain ones kept (an uncertain drug
    #: may have been given). Published: uncertain ones dropped. In both views a planned or
    #: hypothetical medication is a future medication only.
    occurred_meds: bool = False
    #: ConfirmedAdvEvent: caused problems that are affirmed, plus problems the drug was stopped
    #: for; PotentialAdvEvent: caused problems that are uncertain, planned or hypothetical (for a
    #: future medication: every caused problem not negated); negated ones dropped. Published: negated, uncertain or hypothetical partners of either
    #: relation are potential, all others (planned too) confirmed.
    adverse_events_by_assertion: bool = False
    #: ``TreatmentType`` mentions (drug classes) can be future medications. Published: only
    #: MedicationName and MedicationRegimen.
    treatment_type_future: bool = False
    #: Stage/TNM/Grade ``AdditionalTesting`` is derived (planned or hypothetical tests conducted
    #: for it) and scored. Published: never scored.
    score_additional_testing: bool = False


PUBLISHED = GoldRules()
CLEAN = GoldRules(**{f.name: True for f in fields(GoldRules)})
GOLD_VIEWS = {"published": PUBLISHED, "clean": CLEAN}


def scored_fields(subtype: str, rules: GoldRules) -> tuple[str, ...]:
    """The subtype's fields scored under ``rules`` (AdditionalTesting only when switched on)."""
    out = SUBTYPES[subtype].fields
    if not rules.score_additional_testing:
        out = tuple(f for f in out if f != "AdditionalTesting")
    return out


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
    return e.attributes.get("ExperiencerVal", "patient") not in ("family", "others")


def occurred(e: Entity) -> bool:
    return is_patient(e) and modality(e) not in NOT_OCCURRED


def _pos(e: Entity):
    return (e.start, e.end, e.id)


def _unique(values):
    return list(dict.fromkeys(values))


class SectionGraph:
    """Entities of one section and the relations between them, looked up in both directions."""

    def __init__(self, doc: Document, section: Section, rules: GoldRules = PUBLISHED):
        self.doc = doc
        self.rules = rules
        self.entities = {e.id: e for e in entities_in(doc, section)}
        self.links: dict[str, list[tuple[str, Entity]]] = {i: [] for i in self.entities}
        for rel in doc.relations:
            a, b = self.entities.get(rel.arg1), self.entities.get(rel.arg2)
            if a is None or b is None:
                continue
            self.links[a.id].append((rel.type, b))
            self.links[b.id].append((rel.type, a))
        self.names = {e.id: self._name(e) for e in self.entities.values()}

    def _name(self, e: Entity) -> str:
        """The entity's text; a biomarker name carries its results ("ER +"; clean: "ER+")."""
        if e.type != "BiomarkerName":
            return norm(e.text)
        results = [r for _, r in self.links[e.id] if r.type == "BiomarkerResult"]
        if self.rules.biomarker_as_written and results:
            return " ".join(
                [_as_written(self, e, results[0])] + [norm(r.text) for r in results[1:]]
            )
        return " ".join([norm(e.text)] + [norm(r.text) for r in results])

    def text(self, e: Entity) -> str:
        return self.names[e.id]

    def texts(self, entities) -> list[str]:
        return _unique(self.text(e) for e in entities)

    def of_type(self, *types: str) -> list[Entity]:
        return sorted((e for e in self.entities.values() if e.type in types), key=_pos)

    def partners(self, e: Entity, rel_types, partner_types=None) -> list[Entity]:
        found = {}
        for rtype, other in self.links[e.id]:
            if rtype in rel_types and (partner_types is None or other.type in partner_types):
                found[other.id] = other
        return sorted(found.values(), key=_pos)

    def times(self, e: Entity, rel_types=TEMPORAL) -> list[str]:
        kinds = {"Datetime"} if self.rules.datetime_only else None
        return self.texts(self.partners(e, rel_types, kinds))

    def through(self, e: Entity, first, then) -> list[Entity]:
        """Z for every X --first-- Y --then-- Z (not X's own ``then`` partners)."""
        out = {}
        for y in self.partners(e, first):
            for z in self.partners(y, then):
                if z.id != e.id:
                    out[z.id] = z
        return sorted(out.values(), key=_pos)

    def sites(self, entities) -> list[str]:
        out = []
        for site in entities:
            lats = [norm(x.text) for x in self.partners(site, {"LateralityOfSite"}, {"Laterality"})]
            out.append(f"{', '.join(lats)} {self.text(site)}" if lats else self.text(site))
        return _unique(out)

    def findings(self, e: Entity, rel_types) -> list[str]:
        """Reason/Result partners, with the published negation and uncertainty prefixes."""
        out = []
        for x in self.partners(e, rel_types):
            m = modality(x)
            if self.rules.asserted_findings_only:
                if occurred(x) and m not in UNCERTAIN:
                    out.append(self.text(x))
            elif m == "negated":
                out.append(f"no {self.text(x)}")
            elif m in UNCERTAIN:
                out.append(f"uncertain {self.text(x)}")
            elif m != "hypothetical_in_future":
                out.append(self.text(x))
        return _unique(out)

    def revealed_date(self, e: Entity) -> list[str]:
        dates = self.times(e) if self.rules.own_date else []
        return _unique(dates + self.texts(self._revealed_times(e)))

    def _revealed_times(self, e: Entity) -> list[Entity]:
        times = self.through(e, {"TestOrProcedureReveals"}, TEMPORAL)
        if self.rules.datetime_only:
            times = [t for t in times if t.type == "Datetime"]
        return times


# --- one function per subtype: (graph) -> list of GoldTuple ------------------------------------


def _symptoms(g: SectionGraph, attribute: str | None = None) -> list[GoldTuple]:
    """Symptom mentions (primary filter); Datetime: temporal partners. ``symptoms_at_diagnosis``
    keeps those with IsPresentOnFirstCancerDiagnosis = yes, ``symptoms_due_to_cancer`` those with
    IsCausedByDiagnosedCancer = yes."""
    return [
        GoldTuple("", g.text(e), {"Datetime": g.times(e)})
        for e in g.of_type("Symptom")
        if occurred(e) and (attribute is None or e.attributes.get(attribute) == "yes")
    ]


def symptoms(g):
    return _symptoms(g)


def symptoms_at_diagnosis(g):
    return _symptoms(g, "IsPresentOnFirstCancerDiagnosis")


def symptoms_due_to_cancer(g):
    return _symptoms(g, "IsCausedByDiagnosedCancer")


def _test_tuples(g: SectionGraph, entity_type: str, result_rels) -> list[GoldTuple]:
    """Datetime: temporal; Site: SiteOf partners (+laterality); Reason: findings it was
    conducted for; Result: findings through ``result_rels``."""
    return [
        GoldTuple(
            "",
            g.text(e),
            {
                "Datetime": g.times(e),
                "Site": g.sites(g.partners(e, {"SiteOf"})),
                "Reason": g.findings(e, {"TestOrProcedureConductedForProblem"}),
                "Result": g.findings(e, result_rels),
            },
        )
        for e in g.of_type(entity_type)
        if occurred(e)
    ]


def radiology(g):
    """Radiology mentions; Result: ResultOfTest and TestOrProcedureReveals partners."""
    return _test_tuples(g, "Radiology", RESULT)


def procedures(g):
    """ProcedureName mentions; Result also takes ProcedureDesc partners (outcome, margins)."""
    return _test_tuples(g, "ProcedureName", PROC_RESULT)


def genomics(g):
    """GenomicTest mentions; Datetime: temporal; Result: ResultOfTest/Reveals findings."""
    return [
        GoldTuple("", g.text(e), {"Datetime": g.times(e), "Result": g.findings(e, RESULT)})
        for e in g.of_type("GenomicTest")
        if occurred(e)
    ]


def biomarkers(g):
    """BiomarkerName mentions with their results; Datetime: the revealed date."""
    out = []
    for e in g.of_type("BiomarkerName"):
        if not occurred(e):
            continue
        names = [g.text(e)]
        if g.rules.biomarker_as_written:
            results = g.partners(e, {"BiomarkerRel"}, {"BiomarkerResult"})
            names = [_as_written(g, e, r) for r in results] or names
        out += [GoldTuple("", n, {"Datetime": g.revealed_date(e)}) for n in names]
    return out


def _as_written(g: SectionGraph, a: Entity, b: Entity) -> str:
    """``a`` then ``b`` as the note writes them when only spaces separate them ("ER+")."""
    gap = g.doc.text[a.end : b.start]
    if a.start <= b.start and (gap == "" or gap.isspace()):
        return norm(g.doc.text[a.start : b.end])
    return f"{norm(a.text)} {norm(b.text)}"


def histology(g):
    """Histology mentions; Datetime: the revealed date."""
    return [
        GoldTuple("", g.text(e), {"Datetime": g.revealed_date(e)})
        for e in g.of_type("Histology")
        if occurred(e)
    ]


def metastasis(g):
    """Metastasis mentions. Site: its own SiteOf partners and those of the tests that revealed
    it; Procedure: its ResultOfTest/Reveals partners; Datetime: the revealed date (clean: the
    revealing tests' dates, else its own)."""
    out = []
    for e in g.of_type("Metastasis"):
        if not occurred(e):
            continue
        sites = g.partners(e, {"SiteOf"}) + g.through(e, {"TestOrProcedureReveals"}, {"SiteOf"})
        dates = g.texts(g._revealed_times(e))
        if g.rules.own_date and not dates:
            dates = g.times(e)
        out.append(
            GoldTuple(
                "",
                g.text(e),
                {
                    "Site": g.sites(sorted(sites, key=_pos)),
                    "Procedure": g.texts(g.partners(e, RESULT)),
                    "Datetime": dates,
                },
            )
        )
    return out


def _staging(g, etype):
    """Stage / TNM / Grade mentions; Datetime: the revealed date; AdditionalTesting (clean only):
    planned or hypothetical tests conducted for it."""
    out = []
    for e in g.of_type(etype):
        if not occurred(e):
            continue
        extra = []
        if g.rules.score_additional_testing:
            tests = g.partners(e, {"TestOrProcedureConductedForProblem"}, TEST_TYPES)
            extra = g.texts(t for t in tests if modality(t) in FUTURE)
        out.append(
            GoldTuple("", g.text(e), {"Datetime": g.revealed_date(e), "AdditionalTesting": extra})
        )
    return out


def stage(g):
    return _staging(g, "Stage")


def tnm(g):
    return _staging(g, "TNM")


def grade(g):
    return _staging(g, "Grade")


def _medications(g: SectionGraph, types) -> list[Entity]:
    """Cancer-directed medication mentions for the patient (TreatmentCategory not Supportive or
    Others); published: not negated or uncertain."""
    out = []
    for e in g.of_type(*types):
        if not is_patient(e) or e.attributes.get("TreatmentCategory") in ("Supportive", "Others"):
            continue
        if not g.rules.occurred_meds and modality(e) in UNCERTAIN | {"negated"}:
            continue
        out.append(e)
    return out


def _adverse_events(g: SectionGraph, e: Entity) -> tuple[list[str], list[str]]:
    """(confirmed, potential) adverse events of a medication."""
    if not g.rules.adverse_events_by_assertion:
        partners = g.partners(e, ADVERSE)
        potential = UNCERTAIN | {"negated", "hypothetical_in_future"}
        return (
            g.texts(x for x in partners if modality(x) not in potential),
            g.texts(x for x in partners if modality(x) in potential),
        )
    caused = g.partners(e, {"ConditionOrTreatmentCausesProblem"}, PROBLEM_TYPES)
    caused = [x for x in caused if is_patient(x)]
    stopped_for = g.partners(e, {"TreatmentDiscontinuedBecauseOf"}, PROBLEM_TYPES)
    confirmed = [x for x in caused if modality(x) == "affirmed"]
    confirmed += [x for x in stopped_for if occurred(x)]
    potential = [x for x in caused if modality(x) in UNCERTAIN | FUTURE]
    return g.texts(sorted(confirmed, key=_pos)), g.texts(potential)


def _continuity(e: Entity) -> list[str]:
    value = e.attributes.get("TreatmentContinuityVal")
    if not value:
        return []
    return [CONTINUITY.get(value, value.replace("_", " "))]


def consideration(e: Entity) -> str | None:
    """'planned' or 'hypothetical' for a future medication, None for any other: planned when the
    assertion or the continuity says planned, else hypothetical when the assertion is
    hypothetical_in_future (the public treatment reader's order)."""
    if "planned" in modality(e) or "planned" in e.attributes.get("TreatmentContinuityVal", ""):
        return "planned"
    if modality(e) == "hypothetical_in_future":
        return "hypothetical"
    return None


def prescribed_meds(g):
    """MedicationName and MedicationRegimen mentions (medication filter) that are not future
    medications (see ``consideration``; clean: also only those that occurred). Begin/End:
    BeginsOnOrAt + HappensAfter / EndsOnOrAt + HappensBefore partners; Reason:
    TreatmentAdministeredForProblem findings; Continuity: TreatmentContinuityVal (unclear ->
    unknown, started -> continuing, discontinued_early -> 'discontinued early'); adverse events:
    see ``_adverse_events``."""
    out = []
    for e in _medications(g, ("MedicationName", "MedicationRegimen")):
        if consideration(e) is not None:  # a future medication only, in both views
            continue
        if g.rules.occurred_meds and not occurred(e):
            continue
        exact = g.rules.exact_begin_end
        confirmed, potential = _adverse_events(g, e)
        out.append(
            GoldTuple(
                "",
                g.text(e),
                {
                    "Begin": g.times(e, {"BeginsOnOrAt"} if exact else BEGIN),
                    "End": g.times(e, {"EndsOnOrAt"} if exact else END),
                    "Reason": g.findings(e, {"TreatmentAdministeredForProblem"}),
                    "Continuity": _continuity(e),
                    "ConfirmedAdvEvent": confirmed,
                    "PotentialAdvEvent": potential,
                },
            )
        )
    return out


def future_meds(g):
    """Medication mentions (medication filter) whose assertion or continuity is planned
    (Consideration 'planned') or whose assertion is hypothetical_in_future ('hypothetical');
    PotentialAdvEvent as for prescribed meds."""
    types = ["MedicationName", "MedicationRegimen"]
    if g.rules.treatment_type_future:
        types.append("TreatmentType")
    out = []
    for e in _medications(g, types):
        considered = consideration(e)
        if considered is None:
            continue
        _, potential = _adverse_events(g, e)
        if g.rules.adverse_events_by_assertion:  # a drug not yet given: any problem it may cause
            caused = g.partners(e, {"ConditionOrTreatmentCausesProblem"}, PROBLEM_TYPES)
            potential = g.texts(x for x in caused if is_patient(x) and modality(x) != "negated")
        out.append(
            GoldTuple(
                "", g.text(e), {"Consideration": [considered], "PotentialAdvEvent": potential}
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


def finish_tuples(tuples: list[GoldTuple], subtype: str, rules: GoldRules) -> list[GoldTuple]:
    """Every field filled (``unknown`` when empty); tuples merged by text if ``rules`` say so."""
    out: dict = {}
    for i, t in enumerate(tuples):
        key = t.primary.lower() if rules.merge_same_text else i
        if key not in out:
            out[key] = GoldTuple(subtype, t.primary, {f: [] for f in SUBTYPES[subtype].fields})
        for f in SUBTYPES[subtype].fields:
            out[key].fields[f] = _unique(out[key].fields[f] + t.fields.get(f, []))
    for t in out.values():
        for f, values in t.fields.items():
            if not values:
                t.fields[f] = [UNKNOWN]
    return list(out.values())


def derive(
    doc: Document, section: Section, subtype: str, rules: GoldRules = PUBLISHED
) -> list[GoldTuple]:
    return finish_tuples(DERIVATIONS[subtype](SectionGraph(doc, section, rules)), subtype, rules)


def pair_string(primary: str, value: str) -> str:
    """The scored string of one (entity, related entity) pair."""
    return f"{norm(primary)} {norm(value)}"


def gold_rows(
    doc_id: str,
    section_name: str,
    subtype: str,
    tuples: list[GoldTuple],
    view: str = "published",
) -> list[dict]:
    """Rows of gold.tsv: one per scored pair of ``view``'s fields."""
    rows = []
    for index, t in enumerate(tuples):
        for f in scored_fields(subtype, GOLD_VIEWS[view]):
            for value in t.fields[f]:
                rows.append(
                    {
                        "view": view,
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
