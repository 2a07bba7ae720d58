# The toy study (tests only): questions -> requests -> generate -> parsed numbers -> scores ->
# accuracy table and figure. Logic: oncoeval/studies/toy/.

from oncoeval.studies.toy import workflow as toy_wf

TOY = oc.study_block(config, "toy")


localrules:
    toy_prepare,
    toy_requests,
    toy_parse,
    toy_score,
    toy_aggregate,
    toy_referee_agreement,


rule toy_prepare:
    input:
        questions=TOY["questions"] or [],
    output:
        questions=toy_wf.QUESTIONS,
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
        questions=toy_wf.QUESTIONS,
        prompt=f"{toy_wf.PROMPTS}/{toy_wf.REQUESTSET}.txt",
    output:
        requests=toy_wf.REQUESTS,
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
        responses=toy_wf.paths.responses("{model}", toy_wf.REQUESTSET),
    output:
        parsed=toy_wf.PARSED,
    log:
        toy_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/toy/parse.py"


rule toy_score:
    input:
        parsed=toy_wf.PARSED,
        questions=toy_wf.QUESTIONS,
    output:
        **toy_wf.OUTPUTS_SCORE,
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
                m: toy_wf.OUTPUTS_SCORE["scores"].format(model=m)
                for m in run_wf.evaluated_models(config, "toy")
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


# The judge role: the referee answers the same questions; each model's numbers against its own.
rule toy_referee_agreement:
    input:
        # One input per model, named by its id, and the referee's, named "referee".
        unpack(
            lambda wc: toy_wf.referee_inputs(
                TOY, run_wf.evaluated_models(config, "toy")
            )
        ),
    output:
        **toy_wf.OUTPUTS_REFEREE,
    log:
        toy_wf.paths.log("referee_agreement"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/toy/referee_agreement.py"
