"""The rules' side of the coral study: result paths, declared outputs, final targets and the
input helpers rules/coral.smk calls while building the DAG."""

from __future__ import annotations

import re
from pathlib import Path

from oncoeval.config import study_evaluated_models

from ..contract import Headline, Resampling, ResultPaths, prompts_dir
from .tasks import SUBTYPES

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


# For the report and the summary (oncoeval.report): the study's category title, what its
# bootstrap resamples, and its headline measures per model.
REPORT_TITLE = "CORAL (oncology note extraction)"
# Fields are averaged within the note (the unit); notes of one patient (a patient_id column in
# the metadata) are resampled together.
RESAMPLING = Resampling(unit="note", cluster="patient (metadata patient_id; else the note)")
HEADLINES = (
    Headline("coral", "tables/overall.tsv", "EM-F1", "em_f1", (("view", "published"),)),
    Headline("coral", "tables/overall.tsv", "BLEU-4", "bleu4", (("view", "published"),)),
    Headline("coral", "tables/overall.tsv", "ROUGE-1", "rouge1", (("view", "published"),)),
)
PROMPT_DIR = prompts_dir(paths.study)

# The metrics of the tables and figures: score column -> (label in the tables and on the axes,
# name in the figure titles).
METRICS = {
    "bleu4": ("BLEU4", "BLEU-4"),
    "rouge1": ("ROUGE1", "ROUGE-1"),
    "em_f1": ("EM_F1", "exact-match F1"),
}
TABLES = ("overall", "by_field", "by_task", "by_cancer_type", "kruskal_gender", "kruskal_race")


def table_outputs(name: str) -> dict[str, str]:
    """A table's two files: ``<name>`` (.tsv) and ``<name>_md`` (.md)."""
    return {name: paths.table(name), f"{name}_md": paths("tables", f"{name}.md")}


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
    **{k: v for t in TABLES for k, v in table_outputs(t).items()},
    **{
        (name := figure_name(panel, metric)): paths.figure(name)
        for panel in ("figure3", "figureS2")
        for metric in METRICS
    },
}
REVIEW_SHEET = paths("review", "{model}_sheet.xlsx")
OUTPUTS_REVIEW = table_outputs("expert_review")
# Every declared output of the study, by name ({model}: one file per evaluated model).
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
    unknown = [s for s in subtypes if s not in SUBTYPES]
    if unknown:
        raise ValueError(f"studies.coral.subtypes: unknown {unknown}; known: {list(SUBTYPES)}")
    return {
        "system": f"{PROMPT_DIR}/system.txt",
        "template": f"{PROMPT_DIR}/user_template.txt",
        "tasks": [f"{PROMPT_DIR}/tasks/{s}.txt" for s in subtypes],
    }


def review_model(block: dict, models: list[str]) -> str | None:
    """The model whose parsed outputs fill the review sheet: the configured one, else the first."""
    return block["review"]["model"] or (models[0] if models else None)


def comparison_inputs(config: dict) -> dict:
    """Inputs of the model comparison beside the scores: the metadata (its patient_id)."""
    metadata = config["studies"]["coral"]["metadata"]
    return {"metadata": metadata} if metadata else {}


def unit_scores(score_path, inputs: dict):
    """Per-note means of each headline metric over the published view's scored units (NaN:
    every unit of the note was unscored), clustered by the metadata's patient_id if any."""
    import pandas as pd

    scores = pd.read_csv(score_path, sep="\t", dtype={"doc_id": str})
    view = scores[scores["gold_view"] == "published"]
    patient = {}
    if inputs.get("metadata"):
        meta = pd.read_csv(inputs["metadata"], sep="\t", dtype=str, keep_default_na=False)
        if "patient_id" in meta.columns:
            patient = {d: p for d, p in zip(meta["doc_id"], meta["patient_id"], strict=True) if p}
    rows = []
    for h in HEADLINES:
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


def final_targets(config: dict) -> list[str]:
    """The study's final targets (``config``'s coral block filled by common.smk)."""
    block = config["studies"]["coral"]
    models = study_evaluated_models(config, "coral")
    out = [OUTPUTS_PREPARE["gold"], OUTPUTS_PREPARE["sections"]]
    out += [SCORES.format(model=m) for m in models]
    out += list(OUTPUTS_AGGREGATE.values())
    reviewer = review_model(block, models)
    if reviewer:
        out.append(REVIEW_SHEET.format(model=reviewer))
    if block["review"]["sheet"]:
        out += list(OUTPUTS_REVIEW.values())
    return out
