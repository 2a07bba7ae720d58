# The coral study (CORAL): BRAT notes -> gold + requests -> generate -> parsed tuples -> per-unit
# scores -> tables, figures and the expert-review sheet. Logic: oncoeval/studies/coral/.

from oncoeval.studies.coral import workflow as coral_wf

# The coral block, its schema defaults filled in by common.smk.
CORAL = oc.study_block(config, "coral")


localrules:
    coral_prepare,
    coral_requests,
    coral_parse,
    coral_score,
    coral_aggregate,
    coral_review_requests,
    coral_review_parse,


rule coral_prepare:
    input:
        notes=lambda wc: (
            coral_wf.note_files(CORAL["notes_dir"]) if CORAL["notes_dir"] else []
        ),
        conf=CORAL["annotation_conf"],
        metadata=[CORAL["metadata"]] if CORAL["metadata"] else [],
    output:
        **coral_wf.OUTPUTS_PREPARE,
        notes_items=coral_wf.NOTES_ITEMS,
    log:
        coral_wf.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        notes_dir=CORAL["notes_dir"],
        sections=CORAL["sections"],
        limit=ITEM_LIMIT,
    script:
        "../scripts/coral/prepare.py"


rule coral_requests:
    input:
        notes_items=coral_wf.NOTES_ITEMS,
        system=coral_wf.prompt_files([])["system"],
        template=coral_wf.prompt_files([])["template"],
        tasks=coral_wf.prompt_files(CORAL["subtypes"])["tasks"],
    output:
        requests=coral_wf.REQUESTS,
    log:
        coral_wf.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        subtypes=CORAL["subtypes"],
        max_new_tokens=CORAL["max_new_tokens"],
        temperature=CORAL["temperature"],
    script:
        "../scripts/coral/requests.py"


rule coral_parse:
    input:
        responses=coral_wf.paths.responses("{model}", "extraction"),
    output:
        parsed=coral_wf.PARSED,
    log:
        coral_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/parse.py"


rule coral_score:
    input:
        parsed=coral_wf.PARSED,
        gold=coral_wf.OUTPUTS_PREPARE["gold"],
        notes=coral_wf.NOTES_ITEMS,
    output:
        scores=coral_wf.SCORES,
    log:
        coral_wf.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/score.py"


rule coral_aggregate:
    input:
        scores=lambda wc: expand(
            coral_wf.SCORES, model=run_wf.evaluated_models(config, "coral")
        ),
        notes_items=coral_wf.NOTES_ITEMS,
    output:
        **coral_wf.OUTPUTS_AGGREGATE,
    log:
        coral_wf.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.evaluated_models(config, "coral"),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/coral/aggregate.py"


# Expert review: the review model's parsed outputs -> a sheet for the experts (requests); the
# filled sheet -> Table 2 (parse).
rule coral_review_requests:
    input:
        parsed=lambda wc: coral_wf.PARSED.format(model=wc.reviewer),
    output:
        review_sheet=coral_wf.REVIEW_SHEET,
    log:
        coral_wf.paths.log("review_requests", "{reviewer}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/review_requests.py"


rule coral_review_parse:
    input:
        sheet=lambda wc: CORAL["review"]["sheet"],
    output:
        **coral_wf.OUTPUTS_REVIEW,
    log:
        coral_wf.paths.log("review_parse"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/review_parse.py"
