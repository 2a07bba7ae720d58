# The toy study (tests only): questions -> requests -> generate -> parsed numbers -> scores ->
# accuracy table and figure. Logic: oncoeval/studies/toy/.

from oncoeval.studies.toy import workflow as toy_wf

TOY = config["studies"]["toy"]
STUDY_TARGETS["toy"] = lambda: toy_wf.final_targets(config)


localrules:
    toy_prepare,
    toy_requests,
    toy_parse,
    toy_score,
    toy_aggregate,


rule toy_prepare:
    input:
        questions=TOY["questions"] or [],
    output:
        questions=toy_wf.OUTPUTS["questions"],
    log:
        toy_wf.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        limit=ITEM_LIMIT,
    script:
        "../scripts/toy/prepare.py"


rule toy_requests:
    input:
        questions=toy_wf.OUTPUTS["questions"],
        prompt=toy_wf.PROMPT,
    output:
        requests=toy_wf.OUTPUTS["requests"],
    log:
        toy_wf.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=TOY["max_new_tokens"],
    script:
        "../scripts/toy/requests.py"


rule toy_parse:
    input:
        responses=toy_wf.paths.responses("{model}", "ask"),
    output:
        parsed=toy_wf.OUTPUTS["parsed"],
    log:
        toy_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/toy/parse.py"


rule toy_score:
    input:
        parsed=toy_wf.OUTPUTS["parsed"],
        questions=toy_wf.OUTPUTS["questions"],
    output:
        scores=toy_wf.OUTPUTS["scores"],
    log:
        toy_wf.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/toy/score.py"


rule toy_aggregate:
    input:
        # One input per model, named by its id: the script reads each file's model from its name.
        unpack(
            lambda wc: {
                m: toy_wf.OUTPUTS["scores"].format(model=m)
                for m in evaluated_models("toy")
            }
        ),
    output:
        **toy_wf.OUTPUTS_AGGREGATE,
    log:
        toy_wf.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        bootstrap=config["bootstrap"],
    script:
        "../scripts/toy/aggregate.py"
