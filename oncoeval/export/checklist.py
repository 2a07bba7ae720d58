"""The reporting appendix (``results/reporting_checklist.{md,html}``): the items of three
clinical-AI reporting guidelines that a run can answer, filled from what the run recorded.

Each item carries its guideline's published number; the topic and the answers are this
project's own short wording. Where each guideline's numbers were checked is in ``SOURCES``
(and docs/publishing.md): TRIPOD-LLM by its Table 2, CHART by the main items its statement
lists, MI-CLEAR-LLM by the six items of its 2024 checklist.

Each item is ``filled`` (the run answers it), ``partly filled`` (the run answers part and says
what is missing) or ``for the authors`` (no run can know it: a question for the paper). The
answers come from ``results/provenance.json``, the run's config, its results folder (responses,
judge-validation and comparison tables, the summary) and the study contracts; for a study marked
``contains_phi`` they name files and hashes only, never text.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import json
from dataclasses import dataclass
from pathlib import Path

from ..config.checks import enabled_studies, study_evaluated_models, study_judges
from ..core import layout
from ..core.blocks import judge_ids
from ..core.layout import ResultPaths
from ..exposure import facts as exposure_facts
from ..report import tables
from .items import resampling_unit

FILLED, PARTLY, AUTHORS = "filled", "partly filled", "for the authors"
GUIDELINES = {
    "TRIPOD-LLM": "Gallifant J, et al. The TRIPOD-LLM reporting guideline for studies using "
    "large language models. Nat Med 2025;31:60-69. doi:10.1038/s41591-024-03425-5",
    "CHART": "CHART Collaborative. Reporting guideline for chatbot health advice studies: the "
    "Chatbot Assessment Reporting Tool (CHART) statement. BMJ Med 2025;4:e001632. "
    "doi:10.1136/bmjmed-2025-001632",
    "MI-CLEAR-LLM": "Park SH, et al. Minimum reporting items for clear evaluation of accuracy "
    "reports of large language models in healthcare (MI-CLEAR-LLM). Korean J Radiol "
    "2024;25:865-868",
}
# Where the item numbers below were checked (November 2026). Every number used is in one of
# these; none is from memory.
SOURCES = {
    "TRIPOD-LLM": "Table 2 of the Nat Med paper (items 1-19 with subitems), as reproduced in "
    "github.com/youkiti/reporting_guidelines_markdown, "
    "checklists/TRIPOD-LLM/TRIPOD-LLM-Checklist.md (commit 085199cc), and in a second "
    "repository's verbatim transcript of Table 2; the numbering differs from the medRxiv "
    "preprint's (there 6b held the inference settings).",
    "CHART": "The statement's abstract (PMC12320030; PubMed 40747825), which lists its 12 "
    "items by subitem: model identifiers 3a-b, prompt engineering 5a-b, query strategy 6a-d, "
    "performance evaluation 7a-b, sample size 8, data analysis 9a, data availability 12e. "
    "Items are cited at that level; which subitem of 3, 5, 6 and 7 each fact answers was "
    "not checked.",
    "MI-CLEAR-LLM": "The 2024 checklist's six items as numbered by Ko et al., Korean J Radiol "
    "2025;26:304-312 (1 identification and specification of the LLM, 2 stochasticity "
    "handling, 3 prompt wording and syntax, 4 prompt structuring, 5 prompt testing and "
    "optimization, 6 independence of the test data), and the 2024 paper (PMC11444851), whose "
    "item 1 asks for the query dates. A 2025 update (Korean J Radiol 2025;26:1123-1132) has "
    "eight items numbered differently; its numbers were found only in a secondary summary "
    "and are not used.",
}


@dataclass(frozen=True)
class Entry:
    guideline: str
    item: str
    topic: str
    status: str
    answer: str


class RunFacts:
    """What the run recorded, read once, each as a short sentence for the checklist."""

    def __init__(self, root, config: dict, provenance: dict, config_files=()):
        self.root = Path(root)
        self.config = config
        self.config_files = list(config_files)
        self.prov = provenance
        self.studies = enabled_studies(config)
        self.results = self.root / layout.RESULTS

    # -- models --------------------------------------------------------------------------
    def evaluated(self) -> dict[str, list[str]]:
        return {s: study_evaluated_models(self.config, s) for s in self.studies}

    def judges(self) -> dict[str, dict[str, list[str]]]:
        return {
            s: {role: judge_ids(v) for role, v in study_judges(self.config, s).items()}
            for s in self.studies
        }

    def model_lines(self, ids) -> list[str]:
        models = self.prov.get("models") or {}
        out = []
        for mid in sorted(ids):
            rec = models.get(mid)
            if rec is None:
                out.append(f"{mid}: not in provenance.json")
                continue
            ident = json.dumps(rec.get("identity"), sort_keys=True, default=str)
            pins = [f"revision {rec['revision']}"] if rec.get("revision") else []
            pins += [f"{k} {v}" for k, v in sorted(rec.items()) if k.endswith("sha256") and v]
            out.append(
                f"{mid} ({rec.get('backend')}): identity {ident}"
                + (f"; {'; '.join(pins)}" if pins else "; no revision or weights hash recorded")
            )
        return out

    def models_pinned(self, ids) -> bool:
        models = self.prov.get("models") or {}
        return all(
            models.get(m, {}).get("revision")
            or any(k.endswith("sha256") and v for k, v in models.get(m, {}).items())
            for m in ids
        )

    def all_models(self) -> set[str]:
        ids = {m for ms in self.evaluated().values() for m in ms}
        ids |= {m for roles in self.judges().values() for ms in roles.values() for m in ms}
        return ids

    # -- queries -------------------------------------------------------------------------
    def query_dates(self) -> dict[str, tuple[str, str]]:
        """Per model: the first and last write of its responses files (UTC dates)."""
        spans: dict[str, list[float]] = {}
        for path in self.root.glob(ResultPaths("*").responses("*", "*")):
            spans.setdefault(path.parent.name, []).append(path.stat().st_mtime)

        def day(t):
            return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d")

        return {m: (day(min(ts)), day(max(ts))) for m, ts in sorted(spans.items())}

    def decoding(self) -> list[str]:
        models = self.prov.get("models") or {}
        return [
            f"{m}: {json.dumps(models[m].get('decoding') or {}, sort_keys=True, default=str)}"
            for m in sorted(self.all_models())
            if m in models
        ]

    def seeds(self) -> str:
        seeds = self.prov.get("seeds") or {}
        return ", ".join(f"{k} = {v}" for k, v in sorted(seeds.items())) or "none set"

    def repeats(self) -> list[str]:
        out = []
        for s in self.studies:
            block = self.config["studies"][s]
            k = (block.get("rollouts") or {}).get("k")
            if k:
                out.append(f"{s}: {k} sampled rollouts per item, aggregated by consistency")
            reps = (block.get("meta_classifier") or {}).get("repeats")
            if reps:
                out.append(f"{s}: the meta-classifier refit {reps} times")
        return out

    # -- prompts and data -----------------------------------------------------------------
    def files(self, prompts: bool) -> dict[str, str]:
        files = self.prov.get("input_files_sha256") or {}
        return {p: h for p, h in files.items() if p.startswith("config/prompts/") == prompts}

    # -- evaluation ----------------------------------------------------------------------
    def _tables(self, match) -> list[str]:
        return [
            str(p.relative_to(self.root))
            for s in self.studies
            for p in sorted((self.root / ResultPaths(s)(layout.TABLES)).glob("*.tsv"))
            if match(p.stem)
        ]

    def validation_tables(self) -> list[str]:
        """Tables comparing a judge with human labels (judge_*, *validation*)."""
        return self._tables(lambda stem: stem.startswith("judge_") or "validation" in stem)

    def review_tables(self) -> list[str]:
        """Tables of human experts' review of the models' answers."""
        return self._tables(lambda stem: "review" in stem)

    def review_agreement(self) -> list[str]:
        """The clinician review's import (oncoeval.review, results/{study}/review/agreement.tsv):
        reviewers, share double-labelled and their agreement, per study."""
        import pandas as pd

        out = []
        for s in self.studies:
            path = self.root / ResultPaths(s).review("agreement.tsv")
            if path.exists():
                r = pd.read_csv(path, sep="\t", keep_default_na=False).iloc[0]
                agree = (
                    f"{r['measure']} {float(r['value']):.2f} "
                    f"(95% CI {float(r['ci_low']):.2f} to {float(r['ci_high']):.2f})"
                    if r["measure"]
                    else "no answer labelled twice"
                )
                unit = review_unit(s)
                out.append(
                    f"{s}: {r['reviewers']} reviewer(s), {r['items_labelled']} {unit}s labelled, "
                    f"{float(r['share_double_labelled']):.0%} by two or more; {agree}"
                )
        return out

    def comparison_tables(self) -> list[str]:
        return [
            str(p.relative_to(self.root))
            for s in self.studies
            for p in [self.root / ResultPaths(s).table(layout.MODEL_COMPARISON)]
            if p.exists()
        ]

    def phi_studies(self) -> list[str]:
        return [s for s in self.studies if self.config["studies"][s].get("contains_phi")]


def review_unit(study: str) -> str:
    """What one labelled item of the study's review is (an answer, a matched pair)."""
    from ..review.studies import review_study

    try:
        return review_study(study).unit
    except SystemExit:
        return "item"


def _join(lines, empty="none") -> str:
    lines = list(lines)
    return "; ".join(lines) if lines else empty


class Answers:
    """The answers several guideline items share, each worded once from the run's facts."""

    DATE_NOTE = (
        " (dates the responses files were written; answers served from the item cache were "
        "first asked earlier, see the cache's records)"
    )

    def __init__(self, f: RunFacts):
        self.f = f
        self.evaluated = sorted({m for ms in f.evaluated().values() for m in ms})
        self.judges = {s: r for s, r in f.judges().items() if r}
        self.validation = f.validation_tables()
        self.cutoff_lines, self.cutoffs_known = exposure_facts.cutoffs(
            f.config.get("models") or [], self.evaluated
        )

    @functools.cached_property
    def model(self) -> str:
        return _join(self.f.model_lines(self.evaluated))

    @functools.cached_property
    def dates(self) -> str:
        """When the models were queried, with the note on cached answers."""
        dates = self.f.query_dates()
        answer = _join(
            (f"{m}: {a} to {b}" for m, (a, b) in dates.items()),
            f"no responses in {layout.results('')} yet",
        )
        return answer + self.DATE_NOTE

    @functools.cached_property
    def stochastic(self) -> str:
        decoding = _join(self.f.decoding())
        return f"Decoding per model: {decoding}. Seeds: {self.f.seeds()}. Repeats: " + _join(
            self.f.repeats(), "one answer per request (no repeated sampling)"
        )

    @functools.cached_property
    def prompts(self) -> str:
        prompts = self.f.files(True)
        return (
            f"{len(prompts)} template files, exact text in the crate and the repository, sha256: "
            + _join(f"{p} {h[:12]}" for p, h in prompts.items())
        )

    @functools.cached_property
    def data(self) -> str:
        data = self.f.files(False)
        return f"{len(data)} input files with sha256: " + _join(
            f"{p} {h[:12]}" for p, h in data.items()
        )

    @functools.cached_property
    def judge(self) -> str:
        return (
            _join(f"{s}: " + ", ".join(f"{role} {'+'.join(ms)}" for role, ms in r.items())
                  for s, r in self.judges.items())
            + ". Validation against human labels: "
            + _join(self.validation, "no judge-validation table in this run")
            + ". Human review of answers: "
            + _join(self.f.review_tables(), "none in this run")
        )  # fmt: skip

    @functools.cached_property
    def judge_status(self) -> str:
        """Filled when every judged study has its validation table."""
        validated = {
            s
            for s in self.judges
            if any(p.startswith(ResultPaths(s).root + "/") for p in self.validation)
        }
        return AUTHORS if not self.judges else FILLED if validated == set(self.judges) else PARTLY

    @functools.cached_property
    def stats(self) -> str:
        boot = self.f.config["bootstrap"]
        units = _join(f"{s}: {resampling_unit(s)}" for s in self.f.studies)
        return (
            f"Means with {boot['ci']:.0%} intervals over whole clusters of the resampling unit "
            f"of each study ({units}), chosen by each measure's declared kind and range: Wilson "
            "for a share of independent units, else a Wilson-type score interval with the "
            "effective n of the cluster-robust standard error (docs/comparisons.md); each "
            "table's caption names its method, unit, cluster and n. Unparseable answers counted "
            f"as unscored in {layout.summary()}."
        )

    @functools.cached_property
    def compare(self) -> str:
        return (
            "Every pair of evaluated models per headline measure: paired difference over shared "
            "units, p, Bonferroni-adjusted p over every pair on the study's primary measure "
            "(other measures descriptive) and the interval that inverts the same test at the "
            "same adjustment; each model's standing against the leader (behind, equivalent "
            "within a margin, or not separable at this n). Tables: "
            + _join(self.f.comparison_tables(), "none (one model per study)")
        )

    @functools.cached_property
    def software(self) -> str:
        f, libs = self.f, self.f.prov.get("libraries") or {}
        return (
            f"OncoEval (Snakemake workflow), Python {libs.get('python')}, "
            + ", ".join(f"{k} {v}" for k, v in sorted(libs.items()) if k != "python")
            + "; code, config and results in the Workflow Run RO-Crate "
            + f"({layout.results(layout.PUBLISH)}/)."
            + (f" Config: {', '.join(f.config_files)}." if f.config_files else "")
        )

    @functools.cached_property
    def data_share(self) -> str:
        phi_text = (self.f.config.get("report") or {}).get("include_phi_text")
        return (
            self.data
            + f". Studies marked contains_phi: {_join(self.f.phi_studies())}; their exports and "
            "the crate hold ids and sha256 hashes instead of text (report.include_phi_text is "
            f"{'on' if phi_text else 'off'}), and only models marked phi_safe received them. "
            "Whether and where the data are shared: for the authors."
        )


def entries(f: RunFacts) -> list[Entry]:
    """Every item of the three guidelines, in their order."""
    a = Answers(f)
    return tripod_llm(f, a) + chart(a) + mi_clear_llm(f, a)


def tripod_llm(f: RunFacts, a: Answers) -> list[Entry]:
    """TRIPOD-LLM, Table 2 of Gallifant et al. (see SOURCES)."""
    reviewed = f.review_tables() + f.review_agreement()
    items = [
        ("5a", "Data sources and why they were used", PARTLY,
         a.data + ". Who collected the data and why these: for the authors."),
        ("5c", "Oldest and newest date of the text used", AUTHORS,
         "The dates the source texts span are not in the data files the run reads."),
        ("6a", "LLM name, version and last date of training",
         FILLED if a.cutoffs_known and a.evaluated else PARTLY,
         a.model + ". The last date of training (training_cutoff) per model: "
         + _join(a.cutoff_lines)),
        ("6c", "How text was generated: prompting and inference settings", FILLED,
         a.prompts + ". " + a.stochastic),
        ("7b", "Relevance of the metrics and their agreement with human evaluation",
         a.judge_status, a.judge),
        ("7c", "Outcome, how it was computed, date of inference, metrics", PARTLY,
         a.stats + " Inference dates: " + a.dates),
        ("7d", "Human assessors: qualifications, instructions, agreement",
         PARTLY if reviewed else AUTHORS,
         "Human review in this run: " + _join(reviewed, "none")
         + ". Who the assessors were and what they were told: for the authors."),
        ("7e", "Comparison with other LLMs and benchmarks", FILLED, a.compare),
        ("8b", "Annotators: how many, share labelled by more than one, agreement",
         PARTLY if f.review_agreement() else AUTHORS,
         "Clinician review imported in this run (make review-import): "
         + _join(f.review_agreement(), "none")
         + ". Annotation of the input datasets' own labels: for the authors."),
        ("9a", "How the prompts were designed, curated and selected", PARTLY,
         a.prompts + ". How they were designed and chosen: for the authors."),
        ("14e", "Availability of the study data", PARTLY, a.data_share),
        ("14f", "Availability of the code", FILLED, a.software),
    ]  # fmt: skip
    return [Entry("TRIPOD-LLM", *item) for item in items]


def chart(a: Answers) -> list[Entry]:
    """CHART, main items as the statement's abstract lists them (see SOURCES)."""
    items = [
        ("3", "Model identifiers", FILLED if a.f.models_pinned(a.evaluated) else PARTLY, a.model),
        ("5", "Prompt engineering", PARTLY,
         a.prompts + ". How the prompts were developed: for the authors."),
        ("6", "Query strategy: sessions, settings, repeats, dates", PARTLY,
         "Each request is sent as its own conversation (no shared chat history). "
         + a.stochastic + ". Queried: " + a.dates),
        ("7", "Performance evaluation: reference standard, raters, judges", a.judge_status,
         a.judge),
        ("8", "Sample size", PARTLY,
         f"Items per study and model are in {layout.summary()} (n, n unscored); why this "
         "sample size: for the authors."),
        ("9a", "Data analysis", FILLED, a.stats + " " + a.compare),
        ("12e", "Data availability", PARTLY, a.data_share),
    ]  # fmt: skip
    return [Entry("CHART", *item) for item in items]


def mi_clear_llm(f: RunFacts, a: Answers) -> list[Entry]:
    """MI-CLEAR-LLM, the six items of the 2024 checklist (see SOURCES)."""
    audit_lines, audited = exposure_facts.audit(f.results, f.studies)
    items = [
        ("1", "The LLM: name, version, maker, query dates, training cutoff", PARTLY,
         a.model + ". Queried: " + a.dates
         + ". Training-data cutoff and web access of each model: for the authors."),
        ("2", "Stochasticity: settings and how many attempts", FILLED, a.stochastic),
        ("3", "Exact prompt wording and syntax", FILLED, a.prompts),
        ("4", "Prompt structuring: how queries were arranged", FILLED,
         "Every request is a fresh conversation: its messages are the whole context the "
         "model sees; no answer is fed into another item's request. Templates per request "
         "set in config/prompts/."),
        ("5", "Prompt testing and optimization", AUTHORS,
         "The run uses the prompts as given; how they were tried and refined before: for "
         "the authors."),
        ("6", "Independence of the test data from training data",
         FILLED if audited and set(audited) == set(f.studies) else PARTLY,
         a.data + ". Datasets public since: "
         + _join(exposure_facts.releases(f.studies), "not documented")
         + ". Training cutoffs: " + _join(a.cutoff_lines)
         + ". Exposure audit (docs/exposure.md; no evidence is not proof of absence): "
         + _join(audit_lines, "not run (exposure.enabled is off)")),
    ]  # fmt: skip
    return [Entry("MI-CLEAR-LLM", *item) for item in items]


def counts(items: list[Entry]) -> dict[str, int]:
    return {s: sum(1 for e in items if e.status == s) for s in (FILLED, PARTLY, AUTHORS)}


def markdown(items: list[Entry]) -> str:
    c = counts(items)
    lines = [
        "# Reporting checklist",
        "",
        f"Items of TRIPOD-LLM, CHART and MI-CLEAR-LLM this run can answer: {c[FILLED]} filled, "
        f"{c[PARTLY]} partly filled, {c[AUTHORS]} for the authors. Item numbers are the "
        "guidelines' own; the wording is a short paraphrase.",
        "",
        "| Guideline | Item | Topic | Status | From the run |",
        "| --- | --- | --- | --- | --- |",
    ]
    for e in items:
        answer = e.answer.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {e.guideline} | {e.item} | {e.topic} | {e.status} | {answer} |")
    lines += ["", "Sources (and where the item numbers were checked):", ""] + [
        f"- {k}: {v}. Numbers checked against: {SOURCES[k]}" for k, v in GUIDELINES.items()
    ]
    return "\n".join(lines) + "\n"


def html_page(items: list[Entry]) -> str:
    c = counts(items)
    rows = "".join(
        f"<tr class='{e.status.replace(' ', '-')}'><td>{html.escape(e.guideline)}</td>"
        f"<td>{html.escape(e.item)}</td><td>{html.escape(e.topic)}</td>"
        f"<td>{html.escape(e.status)}</td><td>{html.escape(e.answer)}</td></tr>"
        for e in items
    )
    body = (
        f"<p class='caption'>Items of TRIPOD-LLM, CHART and MI-CLEAR-LLM this run can answer: "
        f"{c[FILLED]} filled, {c[PARTLY]} partly filled, {c[AUTHORS]} for the authors.</p>"
        "<table id='checklist'><thead><tr><th>Guideline</th><th>Item</th><th>Topic</th>"
        f"<th>Status</th><th>From the run</th></tr></thead><tbody>{rows}</tbody></table>"
        "<ul>" + "".join(f"<li>{html.escape(k)}: {html.escape(v)}. Numbers checked against: "
                         f"{html.escape(SOURCES[k])}</li>" for k, v in GUIDELINES.items()) + "</ul>"
    )  # fmt: skip
    return tables.page("Reporting checklist", body)


def write(root, config: dict, provenance: dict, out_md, out_html, config_files=()) -> list[Entry]:
    items = entries(RunFacts(root, config, provenance, config_files))
    Path(out_md).write_text(markdown(items), encoding="utf-8")
    Path(out_html).write_text(html_page(items), encoding="utf-8")
    return items
