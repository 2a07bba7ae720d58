"""What the report shows: which result files, under which category, with which caption.

Every table (``results/{study}/tables/*.tsv`` and the few per-item record tables) and every
figure (``*.png``) a study writes becomes one report entry: tables as HTML pages, figures as
they are. Categories are the studies (plus "summary" and "run"); subcategories say what kind of
entry it is. Captions name what the entry shows and the resampling unit of its intervals; the
entry's ``n`` is counted from the file when the report is built.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import pandas as pd

from ..core import layout
from ..core.layout import ResultPaths
from ..exposure import FIGURE_CAPTION as EXPOSURE_FIGURE_CAPTION
from ..studies import STUDIES, contract
from . import tables

# Report categories; the report lists them alphabetically, so numbers keep the summary first
# and the studies in registry order.
SUMMARY_CATEGORY = "1 Summary"
# Each study's declaration (oncoeval.studies.contract.Study): its title, what its intervals
# resample, its outputs with their captions, units and figures' tables, its folders.
STUDY_DECLARATIONS = {s: contract.study(s) for s in STUDIES}
STUDY_TITLES = {s: f"{i} {STUDY_DECLARATIONS[s].title}" for i, s in enumerate(STUDIES, start=2)}
RUN_CATEGORY = f"{len(STUDIES) + 2} Run"
# What each study's intervals resample (contract.Resampling: the unit and its cluster); the
# study tables resample the unit, the comparison tables whole clusters (UNIT_OVERRIDES); an
# output may name its own (its ``Output.unit``).
RESAMPLINGS = {s: d.resampling for s, d in STUDY_DECLARATIONS.items()}
RESAMPLING_UNITS = {s: getattr(r, "unit", "item") for s, r in RESAMPLINGS.items()}
# What the tables every study has show (by name); a study's own outputs carry their captions
# (``Output.caption``); anything else gets a caption built from its name.
MODEL_CALLS = "model_calls"
DESCRIPTIONS = {
    MODEL_CALLS: "Model calls per model and request set: failed, truncated and refused.",
    "model_comparison": "Every pair of evaluated models per headline measure: "
    "paired difference with its interval (the inversion of the row's own test, exact "
    "McNemar or sign-flip permutation, at the row's level), p, Bonferroni-adjusted p over "
    "the primary measure's pairs (m; other measures descriptive), the verdict (ahead, "
    "equivalent within the margin, not separable at this n) and the minimum detectable "
    "difference (mdd).",
    "exposure": "Exposure audit per model and probe: the share of items whose probe "
    "score (completion: ROUGE-L of the answer against the item's true rest; slot: exact "
    "match of a masked word) is above the 95th percentile of the same probe on perturbed "
    "copies of the items, and a verdict (docs/exposure.md).",
    "review_status": "Where the clinician review's labels stand (make review, "
    "docs/review.md): labels settled per stratum of the judge's verdict against the plan, "
    "the reviewers' agreement, and the judge's corrected rates or validation with their "
    "intervals.",
    "leaderboard": "Models ranked per headline measure with their values and "
    "intervals. standing: behind the leader (significant after adjustment), equivalent "
    "to it within the margin, or not separable from it at this n.",
}
# How the 95% CIs of a table are computed: as the note of its Markdown twin states it (the
# study writes it with oncoeval.stats.compare.interval_note: method, unit, cluster, n; read by
# INTERVAL_NOTE); else the comparison's interval, which the study tables share; the comparison
# tables name each row's method in their `interval` column (oncoeval.stats.compare).
INTERVAL_METHOD = (
    "the comparison's interval, by the measure's declared kind and range (Wilson score for a "
    "share of independent units, else a Wilson-type score interval with the effective n of the "
    "cluster-robust standard error)"
)
INTERVAL_NOTE = re.compile(r"Intervals \(\d+%\): [^\n]*")
ROW_INTERVALS = (
    "the method each row names in its interval column (a difference: the inversion of the "
    "row's own test; a value: Wilson or the effective-n score interval, by declared kind)"
)
INTERVAL_METHODS = {
    (s, name): ROW_INTERVALS for s in STUDIES for name in ("model_comparison", "leaderboard")
}
# The words of a caption that the catalog writes when a study declares none: a report must
# never show one (tests/report/test_report_workflow.py checks every entry of a run).
FALLBACK_MARKS = ("plotted.", " study.", "one row per scored item.")
# What the figures every study has show (by name); a study's own carry their captions.
FIGURE_DESCRIPTIONS = {"exposure": EXPOSURE_FIGURE_CAPTION}
# The resampling units of the tables every study has (a study's own outputs carry theirs).
UNIT_OVERRIDES = {
    **{(s, MODEL_CALLS): "none (counts)" for s in STUDIES},
    **{
        (s, name): str(RESAMPLINGS[s] or "item")
        for s in STUDIES
        for name in ("model_comparison", "leaderboard")
    },
}
# Per-model per-item tables ({folder}/{model}.tsv): shown under "per-item records" (one page per
# model): every study's scores/, and the folders it declares.
SCORES_FOLDER = layout.SCORES
ITEM_FOLDERS = {s: {SCORES_FOLDER, *d.item_folders} for s, d in STUDY_DECLARATIONS.items()}
# Further result folders or files (without suffix) a study shows, with their subcategory.
# The clinician review's standing (oncoeval.review.status), once `make review` drew a plan.
REVIEW_STATUS = layout.IN_STUDY.review("review_status")
REPORT_ENTRIES = {
    s: {**d.report_entries, REVIEW_STATUS: "judge validation"}
    for s, d in STUDY_DECLARATIONS.items()
}
SUBCATEGORY_ORDER = ("tables", "figures", "judge validation", "construction", "per-item records")


@dataclass(frozen=True)
class Entry:
    """One result file of a study as the report shows it."""

    study: str
    path: str  # results/{study}/...

    @property
    def rel(self) -> str:
        return str(PurePosixPath(self.path).relative_to(ResultPaths(self.study).root))

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
    def output(self) -> contract.Output | None:
        """The study's declaration of this file (its caption, unit, figure's table), else None."""
        declared = STUDY_DECLARATIONS.get(self.study)
        return declared.output_of(self.path) if declared else None

    @property
    def declared_entry(self) -> str | None:
        """The subcategory the study's REPORT_ENTRIES give this file (by its folder or its
        path without suffix), else None."""
        declared = REPORT_ENTRIES.get(self.study, {})
        return declared.get(str(PurePosixPath(self.rel).with_suffix(""))) or declared.get(
            self.folder
        )

    @property
    def subcategory(self) -> str:
        if self.kind == "figure":
            return "figures"
        if self.name.startswith("judge_"):
            return "judge validation"
        if self.declared_entry:
            return self.declared_entry
        if self.folder in ITEM_FOLDERS.get(self.study, ()):
            return "per-item records"
        return "tables"

    @property
    def html_path(self) -> str:
        """Where the report's copy of the entry lives (tables as HTML, figures as PNG)."""
        suffix = ".png" if self.kind == "figure" else ".html"
        return layout.report_page(self.study, str(PurePosixPath(self.rel).with_suffix(suffix)))

    @property
    def table_key(self) -> str:
        # Per-model files ({folder}/{model}.tsv) share one description per folder.
        return self.folder if self.subcategory == "per-item records" else self.name

    def description(self) -> str:
        output = self.output
        own = output.caption if output else ""
        if self.kind == "figure":
            # its own caption, the shared one, else that of the table it draws
            drawn = STUDY_DECLARATIONS.get(self.study)
            drawn = drawn and drawn.output_of(self.source_table())
            known = own or FIGURE_DESCRIPTIONS.get(self.name) or (drawn.caption if drawn else "")
        else:
            # the tables every study has keep their shared caption
            known = DESCRIPTIONS.get(self.table_key) or own
        if known:
            return known.replace("{name}", self.name)
        words = re.sub(r"[_-]+", " ", self.name).strip()
        if self.subcategory == "per-item records":
            return f"Per-item {self.folder} of model {self.name}: one row per scored item."
        if self.kind == "figure":
            return f"Figure {words}: the numbers of the study's table of the same name, plotted."
        return f"Table {words} of the {self.study.replace('_', ' ')} study."

    @property
    def headline(self) -> bool:
        """Whether the entry is a table the summary reads its headline measures from."""
        declared = STUDY_DECLARATIONS.get(self.study)
        tables = {h.table for h in declared.headlines} if declared else set()
        return self.kind == "table" and self.rel in tables

    def title(self) -> str:
        """The entry's name in the report, in words; headline tables first (the report sorts
        entries by this label: "Headline: ..." before "Table: ...")."""
        # What it shows: the description's first clause (a paper's "Figure 3: " set aside).
        text = re.sub(r"^Figure \w+: ", "", self.description())
        text = re.split(r"\. |: ", text)[0].rstrip(".")
        if len(text) > 90:
            text = text[:87].rsplit(" ", 1)[0] + " …"
        if self.kind == "figure":
            return f"Figure: {text}"
        return f"{'Headline' if self.headline else 'Table'}: {text}"

    def page_title(self) -> str:
        """The title of the entry's own page: the study's name, then the entry's label."""
        return f"{study_name(self.study)} · {self.title()}"

    def resampling_unit(self) -> str:
        if self.subcategory == "per-item records":
            return "none (one row per item)"
        output = self.output
        if output and output.unit:
            return output.unit
        return UNIT_OVERRIDES.get(
            (self.study, self.table_key), RESAMPLING_UNITS.get(self.study, "item")
        )

    def source_table(self) -> str:
        """The table a figure draws, ``results/{study}/tables/{name}.tsv`` (a table its own)."""
        if self.kind != "figure":
            return self.path
        output = self.output
        return ResultPaths(self.study).table((output.table if output else "") or self.name)

    def n_sentence(self, root=".") -> str:
        """The entry's n, counted from its table under ``root`` ("" when it is not there yet)."""
        table = PurePosixPath(self.source_table())
        path = pathlib.Path(root) / table
        if not path.exists():
            return ""
        counted = count_n(path)
        if self.kind == "figure":
            where = table.relative_to(ResultPaths(self.study).root)
            return f"n: {counted} in the table it draws ({where})."
        return f"n: {counted}."

    def interval_sentence(self, root=".") -> str:
        """How the entry's intervals are made and what they resample, or that it has none."""
        unit = self.resampling_unit()
        if unit.startswith("none"):
            why = unit[len("none") :].strip(" ()")
            return f"No intervals{f' ({why})' if why else ''}."
        if self.kind == "figure":
            text = self.description()
            if re.search(r"\bCIs?\b", text):
                return f"Resampling unit of the CIs: {unit}."
            if "standard error" in text:
                return f"Unit of the standard errors: {unit}."
            return "No intervals drawn."
        path = pathlib.Path(root) / self.path
        if path.exists():
            columns = list(pd.read_csv(path, sep="\t", nrows=0).columns)
            if not tables.ci_pairs(columns):
                errors = [c for c in columns if c in ("sem", "se", "std_error")]
                if errors:
                    return f"No intervals; standard errors ({errors[0]}), unit: {unit}."
                return "No intervals."
        method = INTERVAL_METHODS.get((self.study, self.table_key), INTERVAL_METHOD)
        twin = path.with_suffix(".md")
        noted = INTERVAL_NOTE.search(twin.read_text(encoding="utf-8")) if twin.exists() else None
        if noted and (self.study, self.table_key) not in INTERVAL_METHODS:
            # The study's own statement (method, unit, cluster, n), as its table carries it.
            return "95% CIs, as the table states them: " + noted.group(0).strip()
        return f"95% CIs: {method}; resampling unit: {unit}."

    def caption(self, replayed=(), scope: str = "", root=".") -> str:
        """What the entry shows, its n (counted from its table under ``root`` when it is
        there), how its intervals are made and what they resample; ``replayed``: the study's
        evaluated ids that replay stored answers, named as such; ``scope``: the sentence of a
        capped or subset run (:func:`run_scope`), put first."""
        parts = [self.description(), self.n_sentence(root), self.interval_sentence(root)]
        text = " ".join(p for p in parts if p)
        return (f"{scope} " if scope else "") + text + stored_answers_note(replayed)


def study_name(study: str) -> str:
    """The study's report title without the category's ordering number, its explanation in
    brackets left out: "CORAL" (an unknown id in words)."""
    title = STUDY_TITLES.get(study)
    if title is None:
        return study.replace("_", " ")
    return title.split(" ", 1)[-1].split(" (", 1)[0]


def stored_answers_note(replayed) -> str:
    """The caption sentence that keeps replayed answers from passing for a model's ("" if none)."""
    if not replayed:
        return ""
    return f" {', '.join(replayed)}: replayed stored answers (not a model), shown for comparison."


def study_of(path: str) -> str | None:
    """The study a ``results/{study}/...`` path belongs to, else None."""
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) > 2 and parts[0] == layout.RESULTS else None


def entry_for(path: str) -> Entry | None:
    """The report entry of ``results/{study}/...``, or None for files the report does not show."""
    parts = PurePosixPath(path).parts
    if len(parts) < 3 or parts[0] != layout.RESULTS or parts[1] not in STUDY_TITLES:
        return None
    entry = Entry(parts[1], path)
    if path.endswith(".png"):
        return entry
    if not path.endswith(".tsv"):
        return None
    if entry.folder == layout.TABLES or entry.declared_entry:
        return entry
    if entry.folder in ITEM_FOLDERS[entry.study] and len(parts) == 4:
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


# The columns a table counts its units in, first found first, and what they count.
N_COLUMNS = {
    "n": "", "n_profiles": "profiles", "n_patients": "patients", "n_notes": "notes",
    "n_questions": "questions", "n_test": "test traces", "n_units": "units", "n_items": "items",
    "n_pairs": "pairs", "n_models": "models",
}  # fmt: skip


def count_n(path) -> str:
    """The ``n`` an entry's caption states: the items counted in its table."""
    path = str(path)
    if path.endswith(".png"):
        return "see the table of the same name"
    df = pd.read_csv(path, sep="\t")
    rows = f"{len(df)} row{'' if len(df) == 1 else 's'}"
    column = next(
        (c for c in N_COLUMNS if c in df.columns and pd.api.types.is_numeric_dtype(df[c])), None
    )
    if column is None:
        return rows
    values = sorted({int(v) for v in df[column].dropna()})
    shown = ", ".join(str(v) for v in values[:6]) + (", ..." if len(values) > 6 else "")
    what = f" {N_COLUMNS[column]}" if N_COLUMNS[column] else ""
    return f"{shown or 0}{what} per row ({rows})"


def own_response_files(study: str, model: str, root=".") -> list[pathlib.Path]:
    """The response files of ``model``'s item page: its answers to the request sets that are its
    own, a set ``{stage}--{other}`` (e.g. a verifier's calls on another model's answers) being
    the other model's. Adding a model then leaves the page and its n as they were."""
    folder = pathlib.Path(root) / ResultPaths(study).responses(model)
    return [
        p
        for p in sorted(folder.glob("*.jsonl"))
        if "--" not in p.stem or p.stem.rsplit("--", 1)[1] == model
    ]


def count_answers(study: str, model: str, root=".") -> str:
    """The n of a model's item page: its answers (one row each) per own request set."""
    counts = {
        p.stem: sum(1 for line in p.read_text(encoding="utf-8").splitlines() if line.strip())
        for p in own_response_files(study, model, root)
    }
    if not counts:
        return "n: no answers of this model yet."
    sets = ", ".join(f"{k} {n}" for k, n in counts.items())
    return f"n: {sum(counts.values())} answers, one row each (per request set: {sets})."


def count_compared(study: str, models, root=".") -> str:
    """The n of a study's compare page: the items of its answers' request set and the models."""
    declared = STUDY_DECLARATIONS.get(study)
    answers = declared.answers if declared else None
    sizes = []
    for model in models:
        path = pathlib.Path(root) / ResultPaths(study).responses(model)
        path = path / f"{getattr(answers, 'requestset', '')}.jsonl"
        if path.exists():
            sizes.append(sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line))
    items = max(sizes) if sizes else 0
    return f"n: {items} items (rows) of the request set {getattr(answers, 'requestset', '?')}, {len(list(models))} models."


def run_scope(limit=None, only=None) -> str:
    """The sentence that marks a capped (``limit``) or subset (``only``) run ("" for a full run);
    the terminal, the summary, the report's landing and every caption carry it."""
    parts = []
    if limit:
        parts.append(
            f"capped run (limit={int(limit)}: each study used only its first {limit} items)"
        )
    if only:
        names = only if isinstance(only, str) else ",".join(only)
        parts.append(f"subset run (only={names}: only these studies and models)")
    if not parts:
        return ""
    text = " and ".join(parts)
    return f"{text[0].upper()}{text[1:]}; not a full result."


def config_scope(config: dict) -> str:
    """:func:`run_scope` of a workflow config (its ``limit`` and ``only`` keys)."""
    return run_scope(config.get("limit"), config.get("only"))
