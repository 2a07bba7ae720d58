"""The 14 prompt subtypes of the CORAL supplement: their namedtuple formats and scored fields.

Each subtype asks for namedtuples of one name (``tuple_name``) whose first field is the primary
entity and whose other fields are related information. Scored fields are the related ones: each
gold or predicted tuple becomes the strings ``"<primary> <field value>"`` per field, as the
paper's "Entity1 Entity2" pairs. ``label`` is the paper's name of the pair (Figure 3, Table S2).
``extra_tuples`` are other tuple names the prompt asks for (only ``CancerDiagnosis``); they are
parsed and shown to reviewers but not scored, because the annotations hold no first-diagnosis
date to compare with.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Subtype:
    name: str
    task: str  # the paper's task group (Figure 3 grouping)
    tuple_name: str
    primary: str  # primary field of the tuple
    label: str  # the paper's name of the primary entity in pair labels
    fields: tuple[str, ...]  # scored fields, in prompt order
    extra_tuples: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def all_fields(self) -> tuple[str, ...]:
        return (self.primary, *self.fields)

    def pair_label(self, field_name: str) -> str:
        return f"{self.label} {field_name}"


SUBTYPES: dict[str, Subtype] = {
    s.name: s
    for s in [
        Subtype("symptoms", "Symptoms", "SymptomEnt", "Symptom", "Symptom", ("Datetime",)),
        Subtype(
            "symptoms_at_diagnosis",
            "Symptoms",
            "SymptomEnt",
            "Symptom",
            "SymptomAtDiagnosis",
            ("Datetime",),
            {"CancerDiagnosis": ("Datetime",)},
        ),
        Subtype(
            "symptoms_due_to_cancer",
            "Symptoms",
            "SymptomEnt",
            "Symptom",
            "SymptomDueToCancer",
            ("Datetime",),
        ),
        Subtype(
            "radiology",
            "Tests",
            "RadTest",
            "RadiologyTest",
            "RadiologyTest",
            ("Datetime", "Site", "Reason", "Result"),
        ),
        Subtype(
            "procedures",
            "Procedures",
            "Proc",
            "ProcedureName",
            "ProcedureName",
            ("Datetime", "Site", "Reason", "Result"),
        ),
        Subtype(
            "genomics",
            "Tests",
            "Genomics",
            "GenomicTestName",
            "GenomicTestName",
            ("Datetime", "Result"),
        ),
        Subtype(
            "biomarkers",
            "Tumor characteristics",
            "TxBiomarker",
            "Biomarker",
            "Biomarker",
            ("Datetime",),
        ),
        Subtype(
            "histology",
            "Tumor characteristics",
            "Histo",
            "Histology",
            "Histology",
            ("Datetime",),
        ),
        Subtype(
            "metastasis",
            "Tumor characteristics",
            "MetastasisEnt",
            "Metastasis",
            "Metastasis",
            ("Site", "Procedure", "Datetime"),
        ),
        Subtype(
            "stage",
            "Tumor characteristics",
            "StageEnt",
            "Stage",
            "Stage",
            ("Datetime", "AdditionalTesting"),
        ),
        Subtype(
            "tnm",
            "Tumor characteristics",
            "TnmEnt",
            "TNM",
            "TNM",
            ("Datetime", "AdditionalTesting"),
        ),
        Subtype(
            "grade",
            "Tumor characteristics",
            "GradeEnt",
            "Grade",
            "Grade",
            ("Datetime", "AdditionalTesting"),
        ),
        Subtype(
            "prescribed_meds",
            "Medications",
            "PrescribedMedEnt",
            "MedicationName",
            "MedicationName",
            ("Begin", "End", "Reason", "Continuity", "ConfirmedAdvEvent", "PotentialAdvEvent"),
        ),
        Subtype(
            "future_meds",
            "Medications",
            "FutureMedEnt",
            "MedicationName",
            "FutureMedication",
            ("Consideration", "PotentialAdvEvent"),
        ),
    ]
}

UNKNOWN = "unknown"
