"""What the report of a run shows, as rules/report.smk asks it while Snakemake builds the DAG.

The entries of the enabled studies' results (``oncoeval.report.catalog``), the report's own pages
(summary, per-item pages, provenance) and what each page's caption and params depend on. The
functions take the config as the workflow holds it and, where they need them, Snakemake's rules
(``workflow.rules``) or a job's wildcards.
"""

from __future__ import annotations

from pathlib import Path

from oncoeval.backends import get_backend
from oncoeval.config import checks as oc
from oncoeval.core import layout
from oncoeval.core.layout import ResultPaths
from oncoeval.report import catalog
from oncoeval.review import studies as review_studies
from oncoeval.workflow import dag as run_wf


def study_result_files(config: dict, rules) -> list[str]:
    """Every file the enabled studies' ``rules`` write that the report may show: the final
    targets and the tables a rule writes beside them (e.g. a binned twin of a target table)."""
    targets = set(run_wf.final_targets(config))
    paths = set(targets)
    for rule_ in rules:
        outputs = {str(out) for out in rule_.output if "{" not in str(out)}
        if outputs & targets:
            paths |= outputs
    enabled = set(oc.enabled_studies(config))
    # Where a study's clinician review stands, once `make review` drew its plan.
    from oncoeval.review import status as review_status

    paths |= set(review_status.targets(config))
    return sorted(p for p in paths if catalog.study_of(p) in enabled)


def report_entries(config: dict, rules) -> list[catalog.Entry]:
    """The report's entry for each result file it shows (``catalog.entries``)."""
    return catalog.entries(study_result_files(config, rules))


def report_targets(config: dict, rules) -> list[str]:
    """Every page of the report: each entry's page, the per-item pages, the summary and the
    provenance."""
    targets = [e.html_path for e in report_entries(config, rules)]
    targets += item_pages(config)
    targets += [
        layout.summary("tsv"),
        layout.summary("html"),
        layout.PROVENANCE,
    ]
    return targets


def replayed_in(config: dict, study: str) -> list[str]:
    """The study's evaluated ids whose answers are replayed from files, not generated."""
    models = oc.models_by_id(config)
    return [
        m
        for m in oc.study_evaluated_models(config, study)
        if m in models and get_backend(models[m]["backend"]).replays
    ]


def replayed_models(config: dict) -> list[str]:
    """Every replayed id evaluated by an enabled study, sorted (the summary marks them)."""
    return sorted({m for s in oc.enabled_studies(config) for m in replayed_in(config, s)})


def entry_of(wildcards, ext: str) -> catalog.Entry:
    """The entry of a report page job: ``results/{study}/{entry_path}.{ext}``."""
    return catalog.Entry(
        wildcards.study, ResultPaths(wildcards.study)(f"{wildcards.entry_path}.{ext}")
    )


def item_pages(config: dict) -> list[str]:
    """Each evaluated model's item page per study, then the study's compare page."""
    pages = []
    for study in oc.enabled_studies(config):
        pages += [
            layout.drilldown(study, model) for model in run_wf.evaluated_models(config, study)
        ]
        if compare_link(config, study):
            pages.append(layout.drilldown(study, "compare"))
    return pages


def compare_link(config: dict, study: str) -> str:
    """The compare page beside a study's item pages (relative link), if it has two models."""
    return "compare.html" if len(run_wf.evaluated_models(config, study)) > 1 else ""


def model_targets(config: dict, study: str, model: str) -> list[str]:
    """The study's final targets of one model (its per-item files): a model's drill-down page
    waits for them and reruns only when they change, not when another model is added."""
    targets = run_wf.study_targets(config, study)
    own = [
        t
        for t in targets
        if any(model in part.split("--") for part in Path(t).with_suffix("").parts)
    ]
    return own or targets


def caption_replayed(config: dict, entry: catalog.Entry, study: str) -> list[str]:
    """Replayed ids named in an entry's caption: a per-model page names only its own model."""
    replayed = replayed_in(config, study)
    if entry.subcategory == "per-item records":
        return [m for m in replayed if m == entry.name]
    return replayed


def item_page_label(config: dict, study: str, model: str) -> str:
    """The report's label of a model's item page (replayed answers say so)."""
    stored = " (stored answers)" if model in replayed_in(config, study) else ""
    return f"items of {model}{stored}"


def entry_caption(config: dict, wildcards, ext: str, scope: str) -> str:
    """The caption of a report page job's entry, with the run's ``scope`` sentence: a table
    names the replayed ids ``caption_replayed`` gives, a figure every replayed id of its study."""
    entry = entry_of(wildcards, ext)
    if ext == "png":
        replayed = replayed_in(config, wildcards.study)
    else:
        replayed = caption_replayed(config, entry, wildcards.study)
    return entry.caption(replayed, scope)


def review_status_inputs(config: dict, study: str, root: Path = Path(".")) -> dict:
    """The ``review_status`` rule's inputs (oncoeval.review.status): the plan, the last
    import's tables where there are any, and the study's tables the status reads (``table_0``,
    ...) that the run writes (the chooser's validation only with its labels set)."""
    where = ResultPaths(study).review()
    out = {"plan": f"{where}/plan.tsv"}
    for name in ("status", "agreement"):
        if (root / where / f"{name}.tsv").exists():
            out[name] = f"{where}/{name}.tsv"
    written = set(run_wf.study_targets(config, study))
    for k, table in enumerate(review_studies.review_study(study).status_tables):
        if ResultPaths(study)(table) in written:
            out[f"table_{k}"] = ResultPaths(study)(table)
    return out
