"""What the report shows: which result files, under which category, with which caption.

Every table (``results/{study}/tables/*.tsv`` and the few per-item record tables) and every
figure (``*.png``) a study writes becomes one report entry: tables as HTML pages, figures as
they are. Categories are the studies (plus "summary" and "run"); subcategories say what kind of
entry it is. Captions name what the entry shows and the resampling unit of its intervals; the
entry's ``n`` is counted from the file when the report is built.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import pandas as pd

from ..studies import STUDIES


def study_declares(study: str, name: str, default=None):
    """What a study's ``workflow.py`` declares for the report (``REPORT_TITLE``,
    ``RESAMPLING``, ``HEADLINES``), else ``default``."""
    module = importlib.import_module(f"oncoeval.studies.{study}.workflow")
    return getattr(module, name, default)


# Report categories; the report lists them alphabetically, so numbers keep the summary first
# and the studies in registry order.
SUMMARY_CATEGORY = "1 Summary"
STUDY_TITLES = {
    s: f"{i} {study_declares(s, 'REPORT_TITLE', s)}" for i, s in enumerate(STUDIES, start=2)
}
RUN_CATEGORY = f"{len(STUDIES) + 2} Run"
# What each study's intervals resample (contract.Resampling: the unit and its cluster); the
# study tables resample the unit, the comparison tables whole clusters (UNIT_OVERRIDES).
RESAMPLINGS = {s: study_declares(s, "RESAMPLING") for s in STUDIES}
RESAMPLING_UNITS = {s: getattr(r, "unit", "item") for s, r in RESAMPLINGS.items()}
# What the known tables show; anything else gets a caption built from its name.
DESCRIPTIONS = {
    ("side_effects", "table1"): "Precision, recall and F1 of free-form side-effect lists (ff).",
    (
        "side_effects",
        "table2",
    ): "Effect of the list-size constraint (ff_lsc - ff), paired by profile.",
    ("side_effects", "table3"): "Selection from the clinician-curated list (grounded).",
    ("side_effects", "table4"): "Selection from the curated list with the list-size constraint.",
    ("side_effects", "table5"): "Overlap ratio between base and specified profiles.",
    ("side_effects", "table6"): "Recall by temporal onset.",
    ("side_effects", "table7"): "Recall by side-effect frequency.",
    (
        "side_effects",
        "matcher_agreement",
    ): "Agreement of the side-effect matcher with the reference.",
    (
        "side_effects",
        "judge_agreement",
    ): "The configured matcher as a judge of the labelled pairs: agreement and Cohen's κ.",
    (
        "side_effects",
        "judge_per_class",
    ): "Matcher sensitivity and specificity per label (same / not) on the validation pairs.",
    (
        "side_effects",
        "judge_confusion",
    ): "Matcher decisions against the validation labels (confusion matrix).",
    ("cancer_myth", "pcs_pcr"): "Presupposition correction score (PCS) and rate (PCR) per model.",
    ("cancer_myth", "pcs_by_category"): "PCS and PCR by myth category.",
    ("cancer_myth", "pcs_by_generator"): "PCS and PCR by the model that generated the question.",
    ("cancer_myth", "judge_agreement"): "Agreement of the verifier judge with human scores.",
    (
        "cancer_myth",
        "judge_per_class",
    ): "Verifier sensitivity and specificity per score against human scores.",
    ("cancer_myth", "jury_agreement"): "Agreement among the jurors of a verifier jury (Fleiss' κ).",
    (
        "cancer_myth",
        "judge_confusion",
    ): "Verifier verdicts against human scores (confusion matrix).",
    ("coral", "overall"): "Exact-match F1, BLEU-4 and ROUGE-1 over all extracted fields.",
    ("coral", "by_field"): "Scores per (entity, related entity) pair (Figure 3).",
    ("coral", "by_task"): "Scores per extraction task.",
    ("coral", "by_cancer_type"): "Scores by cancer type (Figure S2).",
    ("coral", "kruskal_gender"): "Kruskal-Wallis tests across gender, BH q-values (Table S2).",
    (
        "coral",
        "kruskal_race",
    ): "Kruskal-Wallis tests across race/ethnicity, BH q-values (Table S3).",
    ("coral", "expert_review"): "Expert review categories per entity and relation (Table 2).",
    ("coral", "sections"): "Which notes have HPI and Assessment & Plan sections.",
    ("guidelines", "guideline_tree"): "The guideline tree the study traces paths in.",
    (
        "guidelines",
        "table1_expert",
    ): "Path overlap and treatment match against expert labels (Table 1).",
    ("guidelines", "consistency_accuracy"): "Accuracy against self-consistency.",
    ("guidelines", "accuracy_by_consistency"): "Accuracy in bins of self-consistency.",
    ("guidelines", "proxy_scores"): "Accuracy of the proxy labels per model.",
    ("guidelines", "proxy_agreement"): "Agreement between proxy rankings and expert rankings.",
    ("guidelines", "meta_classifier"): "AUROC of the meta-classifier predicting correct traces.",
    ("guidelines", "clustering"): "Clusters of model traces.",
    ("guidelines", "error_analysis"): "Where traces leave the expert path.",
    ("guidelines", "benchmark"): "Synthetic benchmark: predictions against the synthetic targets.",
    (
        "guidelines",
        "compliance",
    ): "Guideline-compliance cells (positive = NOT_GUIDELINE_COMPLIANT) per model and benchmark.",
    ("guidelines", "annotators"): "Agreement between expert annotators beside model accuracy.",
    (
        "guidelines",
        "divergence_agreement",
    ): "Divergence-point pairs: rollouts vs predictions against experts (Figure 6).",
    **{
        (
            study,
            "model_calls",
        ): "Model calls per model and request set: failed, truncated and refused."
        for study in STUDIES
    },
    **{
        (study, "model_comparison"): "Every pair of evaluated models per headline measure: "
        "paired difference with its interval, paired test (exact McNemar or sign-flip "
        "permutation), multiplicity-adjusted p and the minimum detectable difference (mdd)."
        for study in STUDIES
    },
    **{
        (study, "leaderboard"): "Models ranked per headline measure with intervals (Wilson for "
        "shares of independent units, else Student-t on the cluster-robust SE); tied_with_best: "
        "the leader's advantage is not significant at the adjusted level."
        for study in STUDIES
    },
}
UNIT_OVERRIDES = {
    **{(study, "model_calls"): "none (counts)" for study in STUDIES},
    **{
        (study, name): str(RESAMPLINGS[study] or "item")
        for study in STUDIES
        for name in ("model_comparison", "leaderboard")
    },
    ("guidelines", "compliance"): "none (counts and rates over rollouts)",
    ("coral", "kruskal_gender"): "none (rank test, no resampling)",
    ("coral", "kruskal_race"): "none (rank test, no resampling)",
    ("coral", "expert_review"): "none (counts from the review sheet)",
    ("cancer_myth", "judge_confusion"): "none (counts)",
    ("side_effects", "judge_confusion"): "none (counts)",
    ("guidelines", "guideline_tree"): "none (the guideline itself)",
}
# Per-model per-item tables: shown under "per-item records" (one page per model).
ITEM_FOLDERS = {"scores", "overlap", "rollouts", "proxy", "items"}
SUBCATEGORY_ORDER = ("tables", "figures", "judge validation", "construction", "per-item records")


@dataclass(frozen=True)
class Entry:
    """One result file of a study as the report shows it."""

    study: str
    path: str  # results/{study}/...

    @property
    def rel(self) -> str:
        return str(PurePosixPath(self.path).relative_to(f"results/{self.study}"))

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).stem

    @property
    def kind(self) -> str:
        return "figure" if self.path.endswith(".png") else "table"

    @property
    def folder(self) -> str:
        return PurePosixPath(self.rel).parts[0]

    @property
    def subcategory(self) -> str:
        if self.kind == "figure":
            return "figures"
        if self.folder == "construction":
            return "construction"
        if self.name.startswith("judge_") or self.name == "matcher_agreement":
            return "judge validation"
        if self.folder in ITEM_FOLDERS:
            return "per-item records"
        return "tables"

    @property
    def html_path(self) -> str:
        """Where the report's copy of the entry lives (tables as HTML, figures as PNG)."""
        suffix = ".png" if self.kind == "figure" else ".html"
        return f"results/report/{self.study}/{PurePosixPath(self.rel).with_suffix(suffix)}"

    @property
    def table_key(self) -> str:
        # Per-model files ({folder}/{model}.tsv) share one description per folder.
        return self.folder if self.subcategory == "per-item records" else self.name

    def description(self) -> str:
        known = DESCRIPTIONS.get((self.study, self.table_key))
        if known:
            return known
        words = re.sub(r"[_-]+", " ", self.name).strip()
        if self.subcategory == "per-item records":
            return f"Per-item {self.folder} of model {self.name}: one row per scored item."
        if self.kind == "figure":
            return f"Figure {words}: the numbers of the study's table of the same name, plotted."
        return f"Table {words} of the {self.study.replace('_', ' ')} study."

    def resampling_unit(self) -> str:
        if self.subcategory == "per-item records":
            return "none (one row per item)"
        return UNIT_OVERRIDES.get(
            (self.study, self.table_key), RESAMPLING_UNITS.get(self.study, "item")
        )

    def caption(self, replayed=()) -> str:
        """What the entry shows and its resampling unit (n is added from the file at report time);
        ``replayed``: the study's evaluated ids that replay stored answers, named as such."""
        text = f"{self.description()} Resampling unit of the 95% CIs: {self.resampling_unit()}."
        return text + stored_answers_note(replayed)


def stored_answers_note(replayed) -> str:
    """The caption sentence that keeps replayed answers from passing for a model's ("" if none)."""
    if not replayed:
        return ""
    return f" {', '.join(replayed)}: replayed stored answers (not a model), shown for comparison."


def study_of(path: str) -> str | None:
    """The study a ``results/{study}/...`` path belongs to, else None."""
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) > 2 and parts[0] == "results" else None


def entry_for(path: str) -> Entry | None:
    """The report entry of ``results/{study}/...``, or None for files the report does not show."""
    parts = PurePosixPath(path).parts
    if len(parts) < 3 or parts[0] != "results" or parts[1] not in STUDY_TITLES:
        return None
    entry = Entry(parts[1], path)
    if path.endswith(".png"):
        return entry
    if not path.endswith(".tsv"):
        return None
    if entry.folder == "tables" or entry.folder == "construction":
        return entry
    if entry.folder in ITEM_FOLDERS and len(parts) == 4:
        return entry
    if (entry.folder, entry.name) == ("synthetic", "benchmark"):
        return entry
    return None


def entries(paths) -> list[Entry]:
    """The report entries among ``paths``, each once, in study then subcategory order."""
    found = {e.path: e for e in (entry_for(str(p)) for p in paths) if e is not None}
    order = {s: i for i, s in enumerate(STUDY_TITLES)}
    sub = {s: i for i, s in enumerate(SUBCATEGORY_ORDER)}
    return sorted(
        found.values(), key=lambda e: (order[e.study], sub.get(e.subcategory, 99), e.path)
    )


def count_n(path) -> str:
    """The ``n`` an entry's caption states: the items counted in its table."""
    path = str(path)
    if path.endswith(".png"):
        return "see the table of the same name"
    df = pd.read_csv(path, sep="\t")
    if "n" in df.columns and pd.api.types.is_numeric_dtype(df["n"]):
        values = sorted({int(v) for v in df["n"].dropna()})
        shown = ", ".join(str(v) for v in values[:6]) + (", ..." if len(values) > 6 else "")
        return f"{shown} per row ({len(df)} rows)"
    return f"{len(df)} rows"
