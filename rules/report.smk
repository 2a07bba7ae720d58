# The report: every study table as an HTML page, every figure, the summary page (the report's
# landing content), per-item pages per study and model, and provenance. Entries, categories
# and captions come from oncoeval.report.catalog, the report's targets and each page's params from
# oncoeval.workflow.report; `make report` builds the report of the run.


from oncoeval.report import catalog as report_catalog
from oncoeval.report import phi as report_phi
from oncoeval.workflow import report as report_targets
from oncoeval.report.summary_terminal import print_run_end
from oncoeval.review import status as review_status

# A capped (limit=) or subset (only=) run says so in every caption and on the landing.
RUN_SCOPE = report_catalog.config_scope(config)


# Cheap rules run on the submitting host, never as cluster jobs.
localrules:
    all,
    adhoc_requests,
    report_table,
    report_figure,
    report_summary,
    report_items,
    report_compare,
    estimate_models,
    report_provenance,
    review_status,


wildcard_constraints:
    entry_path=r"[A-Za-z0-9._/-]+",


rule report_table:
    input:
        ANY_STUDY("{entry_path}.tsv"),
    output:
        report(
            layout.report_page("{study}", "{entry_path}.html"),
            caption="../report/entry.rst",
            category=lambda wc: report_catalog.STUDY_TITLES[wc.study],
            subcategory=lambda wc: report_targets.entry_of(wc, "tsv").subcategory,
            labels=lambda wc, input: {
                "entry": report_targets.entry_of(wc, "tsv").title(),
                "file": report_targets.entry_of(wc, "tsv").rel,
                "n": report_catalog.count_n(input[0]),
            },
        ),
    log:
        "logs/report/{study}/{entry_path}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        caption=lambda wc: report_targets.entry_caption(config, wc, "tsv", RUN_SCOPE),
        include_text=lambda wc: report_phi.shows_phi_text(config, wc.study),
    script:
        "../scripts/report_table.py"


rule report_figure:
    input:
        ANY_STUDY("{entry_path}.png"),
    output:
        report(
            layout.report_page("{study}", "{entry_path}.png"),
            caption="../report/entry.rst",
            category=lambda wc: report_catalog.STUDY_TITLES[wc.study],
            subcategory="figures",
            labels=lambda wc: {
                "entry": report_targets.entry_of(wc, "png").title(),
                "file": report_targets.entry_of(wc, "png").rel,
                "n": "on the figure; see its table",
            },
        ),
    log:
        "logs/report/{study}/{entry_path}.figure.log",
    conda:
        "../envs/cpu.yaml"
    params:
        caption=lambda wc: report_targets.entry_caption(config, wc, "png", RUN_SCOPE),
    shell:
        "cp {input} {output} 2> {log}"


rule review_status:
    input:
        unpack(lambda wc: report_targets.review_status_inputs(config, wc.study)),
    output:
        tsv=review_status.STATUS,
        md=review_status.STATUS_MD,
    log:
        "logs/review/{study}/status.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/review_status.py"


rule report_summary:
    input:
        run_wf.final_targets(config),
    output:
        tsv=layout.summary("tsv"),
        md=layout.summary("md"),
        html=report(
            layout.summary("html"),
            caption="../report/summary.rst",
            category=report_catalog.SUMMARY_CATEGORY,
            labels={"entry": "summary"},
        ),
        usage=layout.USAGE,
        fragment=layout.LANDING,
    log:
        "logs/report/summary.log",
    conda:
        "../envs/cpu.yaml"
    params:
        studies=lambda wc: sorted(oc.enabled_studies(config)),
        models=lambda wc: run_wf.studies_of_models(config),
        replayed=lambda wc: report_targets.replayed_models(config),
        item_pages=lambda wc: report_targets.item_pages(config),
        scope=RUN_SCOPE,
    script:
        "../scripts/report_summary.py"


rule report_items:
    input:
        lambda wc: report_targets.model_targets(config, wc.study, wc.model),
    output:
        report(
            layout.drilldown("{study}", "{model}"),
            caption="../report/items.rst",
            category=lambda wc: report_catalog.STUDY_TITLES[wc.study],
            subcategory="per-item records",
            labels=lambda wc: {
                "entry": report_targets.item_page_label(config, wc.study, wc.model),
                "n": "see the page",
            },
        ),
    log:
        "logs/report/{study}/items/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        include_text=lambda wc: report_phi.shows_phi_text(config, wc.study),
        max_chars=config["report"]["item_max_chars"],
        compare=lambda wc: report_targets.compare_link(config, wc.study),
        scope=RUN_SCOPE,
        n=lambda wc: report_catalog.count_answers(wc.study, wc.model),
    script:
        "../scripts/report_items.py"


# Every model's answer to each item of a study side by side (studies with two or more models).
rule report_compare:
    input:
        lambda wc: run_wf.study_targets(config, wc.study),
    output:
        report(
            layout.drilldown("{study}", "compare"),
            caption="../report/compare.rst",
            category=lambda wc: report_catalog.STUDY_TITLES[wc.study],
            subcategory="per-item records",
            labels={"entry": "models side by side", "n": "see the page"},
        ),
    log:
        "logs/report/{study}/items/compare.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.evaluated_models(config, wc.study),
        include_text=lambda wc: report_phi.shows_phi_text(config, wc.study),
        max_chars=config["report"]["item_max_chars"],
        scope=RUN_SCOPE,
        n=lambda wc: report_catalog.count_compared(
            wc.study, run_wf.evaluated_models(config, wc.study)
        ),
    script:
        "../scripts/report_compare.py"


# The model settings `make estimate` prices the request sets with, the study blocks that give
# the token limits of sets still to be built, and the response cache (oncoeval.report.estimate).
rule estimate_models:
    output:
        layout.ESTIMATE_MODELS,
    log:
        "logs/estimate/models.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.estimate_models(config),
        studies=lambda wc: config["studies"],
        cache_dir=config["cache_dir"],
    script:
        "../scripts/estimate_models.py"


rule report_provenance:
    input:
        run_wf.final_targets(config),
        run_wf.model_extra_inputs(config),
    output:
        json=layout.PROVENANCE,
        html=report(
            layout.PROVENANCE_PAGE,
            caption="../report/provenance.rst",
            category=report_catalog.RUN_CATEGORY,
            labels={"entry": "provenance"},
        ),
    log:
        "logs/report/provenance.log",
    conda:
        "../envs/cpu.yaml"
    params:
        # Each model's signature (what its answers depend on): an operational edit (spend
        # cap, concurrency...) reruns nothing; the script reads the entries from the config.
        models=lambda wc: run_wf.model_signatures(config),
        scope=RUN_SCOPE,
    script:
        "../scripts/report_provenance.py"
