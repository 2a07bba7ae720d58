# What the report shows: the entries of the enabled studies' results (oncoeval.report.catalog)
# and the report's own pages. Functions only; the rules are in report.smk.


from pathlib import Path

from oncoeval.report import catalog as report_catalog


def study_result_files():
    """Every file the enabled studies' rules write that the report may show."""
    targets = set(get_final_output())
    paths = set(targets)
    # Tables a rule writes beside its targets (e.g. a binned twin of the target table).
    for rule_ in workflow.rules:
        outputs = {str(out) for out in rule_.output if "{" not in str(out)}
        if outputs & targets:
            paths |= outputs
    enabled = set(oc.enabled_studies(config))
    return sorted(p for p in paths if report_catalog.study_of(p) in enabled)


def report_entries():
    return report_catalog.entries(study_result_files())


def report_targets():
    targets = [e.html_path for e in report_entries()]
    targets += item_pages()
    targets += [
        "results/summary.tsv",
        "results/summary.html",
        "results/provenance.json",
    ]
    return targets


def replayed_in(study):
    """The study's evaluated ids whose answers are replayed from files, not generated."""
    models = oc.models_by_id(config)
    return [
        m
        for m in oc.study_evaluated_models(config, study)
        if models.get(m, {}).get("backend") == "replay"
    ]


def entry_of(wc, ext):
    return report_catalog.Entry(wc.study, f"results/{wc.study}/{wc.entry_path}.{ext}")


def item_pages():
    """Each evaluated model's item page per study, then the study's compare page."""
    pages = []
    for study in oc.enabled_studies(config):
        pages += [
            f"results/report/{study}/drilldown/{model}.html"
            for model in evaluated_models(study)
        ]
        if compare_link(study):
            pages.append(f"results/report/{study}/drilldown/compare.html")
    return pages


def compare_link(study):
    """The compare page beside a study's item pages (relative link), if it has two models."""
    return "compare.html" if len(evaluated_models(study)) > 1 else ""


def model_targets(study, model):
    """The study's final targets of one model (its per-item files): a model's drill-down page
    waits for them and reruns only when they change, not when another model is added."""
    own = [
        t
        for t in STUDY_TARGETS[study]()
        if any(model in part.split("--") for part in Path(t).with_suffix("").parts)
    ]
    return own or STUDY_TARGETS[study]()


def caption_replayed(entry, study):
    """Replayed ids named in an entry's caption: a per-model page names only its own model."""
    replayed = replayed_in(study)
    if entry.subcategory == "per-item records":
        return [m for m in replayed if m == entry.name]
    return replayed


def shows_phi_text(study):
    """Whether the report's pages of ``study`` may show free text from its inputs and answers:
    not for a study marked contains_phi, unless report.include_phi_text (oncoeval.report.phi).
    """
    return bool(
        config["report"]["include_phi_text"]
        or not oc.study_block(config, study)["contains_phi"]
    )
