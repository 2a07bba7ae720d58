"""The rules' side of the coral study: result paths, declared outputs, what the config checks and
the report know of the study, and the input helpers rules/coral.smk calls while building the DAG."""

from __future__ import annotations

import re
from pathlib import Path

from ...core import blocks as oc
from ..contract import (
    Answers,
    ExposureSource,
    Headline,
    ItemScore,
    Resampling,
    ResultPaths,
    Study,
    outputs,
    prompts_dir,
)

paths = ResultPaths("coral")


def settings_problems(block: dict) -> list[str]:
    """Settings of the filled block the schema cannot check (oncoeval.config calls this): every
    heading pattern compiles, so that a bad one is named here, not by a traceback in prepare."""
    sections = block.get("sections") or {}
    patterns = {f"sections.headings.{k}": v for k, v in (sections.get("headings") or {}).items()}
    if sections.get("heading_any"):
        patterns["sections.heading_any"] = sections["heading_any"]
    problems = []
    for key, pattern in patterns.items():
        try:
            re.compile(pattern)
        except (re.error, TypeError) as exc:
            problems.append(
                f"studies.coral.{key}: {pattern!r} is not a valid regular expression ({exc})"
            )
    return problems


PROMPT_DIR = prompts_dir(paths.study)

# The metrics of the tables and figures: score column -> (label in the tables and on the axes,
# name in the figure titles).
METRICS = {
    "bleu4": ("BLEU4", "BLEU-4"),
    "rouge1": ("ROUGE1", "ROUGE-1"),
    "em_f1": ("EM_F1", "exact-match F1"),
}
TABLES = ("overall", "by_field", "by_task", "by_cancer_type", "kruskal_gender", "kruskal_race")


def figure_name(panel: str, metric: str) -> str:
    """Figure 3 (``figure3``, per pair) or Figure S2 (``figureS2``, per cancer type) of a metric."""
    return f"{panel}_{metric}"


# Intermediate files: inputs of later rules, not final targets.
NOTES_ITEMS = paths("items", "notes.jsonl")
REQUESTS = paths.requests("extraction")
PARSED = paths.parsed("{model}", "tsv")

OUTPUTS_PREPARE = {"sections": paths("items", "sections.tsv"), "gold": paths("gold", "gold.tsv")}
SCORES = paths.scores("{model}")
OUTPUTS_AGGREGATE = {
    **paths.tables(*TABLES),
    **{
        (name := figure_name(panel, metric)): paths.figure(name)
        for panel in ("figure3", "figureS2")
        for metric in METRICS
    },
}
# The review sheet of one model's parsed outputs (the reviewer's: ``review_model``).
REVIEW_SHEET = paths.review("{reviewer}_sheet.xlsx")
OUTPUTS_REVIEW = paths.tables("expert_review")
# Every published output of the study, by name ({model}: one file per evaluated model).
OUTPUTS = {
    **OUTPUTS_PREPARE,
    "scores": SCORES,
    "review_sheet": REVIEW_SHEET,
    **OUTPUTS_AGGREGATE,
    **OUTPUTS_REVIEW,
}


def note_files(notes_dir: str) -> list[str]:
    """Every .txt and .ann under the notes folder (inputs of the prepare rule)."""
    root = Path(notes_dir)
    if not root.is_dir():
        return [notes_dir]  # a missing folder: Snakemake reports the missing input by name
    return sorted(str(p) for p in root.rglob("*") if p.suffix in (".txt", ".ann"))


def prompt_files(subtypes) -> dict[str, list[str] | str]:
    """The templates of the asked subtypes (the schema lists the known ones)."""
    return {
        "system": f"{PROMPT_DIR}/system.txt",
        "template": f"{PROMPT_DIR}/user_template.txt",
        "tasks": [f"{PROMPT_DIR}/tasks/{s}.txt" for s in subtypes],
    }


def review_model(block: dict, models: list[str]) -> str | None:
    """The model whose parsed outputs fill the review sheet: the configured one, else the first."""
    return block["review"]["model"] or (models[0] if models else None)


def data_keys(block: dict) -> dict[str, bool]:
    return {"notes_dir": True, "metadata": False, "review.sheet": False}


def judge_roles(block: dict) -> list[tuple[str, str]]:
    return [("review.model", "review model")]


def target_wildcards(block: dict, models: list[str]) -> dict[str, list[str]]:
    reviewer = review_model(block, models)
    return {"reviewer": [reviewer] if reviewer else []}


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores: the metadata (its patient_id)."""
    metadata = oc.study_block(config, "coral").get("metadata")
    return {"metadata": metadata} if metadata else {}


def unit_scores(score_path, inputs: dict):
    """Per-note means of each headline metric over the published view's scored units (NaN:
    every unit of the note was unscored), clustered by the metadata's patient_id if any."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"doc_id": str, "cluster": str})
    view = scores[scores["gold_view"] == "published"]
    # the score file's cluster (the metadata's patient_id when the note has one), else the
    # metadata read here
    patient = {}
    if "cluster" in view:
        patient = {d: c for d, c in zip(view["doc_id"], view["cluster"], strict=True) if c == c}
    if inputs.get("metadata"):
        meta = pd.read_csv(inputs["metadata"], sep="\t", dtype=str, keep_default_na=False)
        if "patient_id" in meta.columns:
            patient |= {d: p for d, p in zip(meta["doc_id"], meta["patient_id"], strict=True) if p}
    rows = []
    for h in (h for h in HEADLINES if h.per_unit):  # the published view's measures
        for doc, value in view.groupby("doc_id", sort=True)[h.column].mean().items():
            rows.append(
                {
                    "measure": h.measure,
                    "unit": doc,
                    "cluster": patient.get(doc, doc),
                    "value": value,
                }
            )
    return pd.DataFrame(rows, columns=["measure", "unit", "cluster", "value"])


def unused_outputs(block: dict) -> list[str]:
    return [] if block["review"]["sheet"] else list(OUTPUTS_REVIEW)


# What the report, the summary, the comparison and the config checks know of the study.
# The published view scores every unit, so a field whose gold is "unknown" is credited to an
# answer that says "unknown" (or nothing); the informative view keeps the units with a known gold
# value, so it shows what the model extracted. The summary shows both, named so; the models are
# compared (oncoeval.stats.compare, unit_scores) on the published view.
PUBLISHED = "published view, credits 'unknown'"
INFORMATIVE = "informative view, known values only"
HEADLINES = tuple(
    Headline(
        "coral",
        paths.rel.table("overall"),
        f"{label} ({name})",
        column,
        (("view", view),),
        n_column="n_notes",
        per_unit=view == "published",
        primary=(column, view) == ("em_f1", "published"),
    )
    for label, column in (("EM-F1", "em_f1"), ("BLEU-4", "bleu4"), ("ROUGE-1", "rouge1"))
    for view, name in (("published", PUBLISHED), ("informative", INFORMATIVE))
)
_BARS = (
    "bars are means with 95% CIs (the tables' intervals, whole clusters resampled) as error "
    "bars, each labelled with its value and n"
)
_METRIC_NAMES = {"em_f1": "exact-match F1", "bleu4": "BLEU-4", "rouge1": "ROUGE-1"}
_NO_INTERVALS = "none (rank test, no resampling)"

STUDY = Study(
    name=paths.study,
    title="CORAL (oncology note extraction)",
    paths=paths,
    outputs=outputs(
        OUTPUTS,
        {
            "overall": {"caption": "Exact-match F1, BLEU-4 and ROUGE-1 over all extracted fields."},
            "by_field": {"caption": "Scores per (entity, related entity) pair (Figure 3)."},
            "by_task": {"caption": "Scores per extraction task."},
            "by_cancer_type": {"caption": "Scores by cancer type (Figure S2)."},
            "kruskal_gender": {
                "caption": "Kruskal-Wallis tests across gender, BH q-values (Table S2).",
                "unit": _NO_INTERVALS,
            },
            "kruskal_race": {
                "caption": "Kruskal-Wallis tests across race/ethnicity, BH q-values (Table S3).",
                "unit": _NO_INTERVALS,
            },
            "expert_review": {
                "caption": "Expert review categories per entity and relation (Table 2).",
                "unit": "none (counts from the review sheet)",
            },
            "sections": {
                "caption": "Which notes have HPI and Assessment & Plan sections, with their "
                "offsets.",
                "unit": "none (one row per note and section)",
            },
            "scores": {
                "caption": "Per-unit scores of {name}: one row per gold view, note, section, "
                "subtype and field with BLEU-4, ROUGE-1, exact-match precision, recall and F1, "
                "parse failures, and unscored for a failed call (no metric, never a zero)."
            },
            **{
                figure_name("figure3", metric): {
                    "caption": f"Figure 3: mean {label} per (entity, related entity) pair and "
                    f"model on the published view: {_BARS} (units); a pair without scored "
                    "units reads 'no data'.",
                    "table": "by_field",
                }
                for metric, label in _METRIC_NAMES.items()
            },
            **{
                figure_name("figureS2", metric): {
                    "caption": f"Figure S2: mean {label} per pair and cancer type on the "
                    f"published view: {_BARS} (units).",
                    "table": "by_cancer_type",
                }
                for metric, label in _METRIC_NAMES.items()
            },
        },
    ),
    # Fields are averaged within the note (the unit); notes of one patient (a patient_id column
    # in the metadata) are resampled together.
    resampling=Resampling(unit="note", cluster="patient (metadata patient_id; else the note)"),
    headlines=HEADLINES,
    summary_note=(
        "CORAL's published view credits an answer of 'unknown' where the gold is unknown; its "
        "informative view scores known values only."
    ),
    answers=Answers(
        "extraction",
        paths.rel.parsed("{model}", "tsv"),
        ("doc_id", "section", "subtype"),
        "status == 'ok'",
        reason="reason",
        value="value",
        # Mean exact-match F1 over the answer's fields, on the published gold.
        score=ItemScore(
            paths.rel.scores("{model}"),
            "em_f1",
            ("doc_id", "section", "subtype"),
            "gold_view == 'published'",
            credited=(
                "gold_unknown_only",
                "credited: the gold is 'unknown'; the published view scores 'unknown' or no "
                "answer there as right",
            ),
        ),
    ),
    item_folders=("items",),
    # The sections table sits with the per-note files but is one table of the study.
    report_entries={"items/sections": "tables"},
    # The exposure audit's items (oncoeval.exposure): each section of each note ({doc_id}:{section}).
    exposure=ExposureSource(
        NOTES_ITEMS, "doc_id", "sections.*.text", "CORAL", "section of an oncology clinical note"
    ),
    data_keys=data_keys,
    judge_roles=judge_roles,
    settings_problems=settings_problems,
    target_wildcards=target_wildcards,
    unused_outputs=unused_outputs,
    unit_scores=unit_scores,
    comparison_inputs=comparison_inputs,
)
