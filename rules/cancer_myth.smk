# Cancer-Myth: zero-shot answers scored -1/0/1 by a verifier (Figure 13), PCS/PCR tables, judge
# validation; and, with `construct: true`, the generator / responder / verifier construction loop.
# Logic: oncoeval/studies/cancer_myth/ (the rules' side: workflow.py). The verifier's request sets
# are named by their step: verify (answers), validate (human-scored answers), retry.

import re

from oncoeval.studies.cancer_myth import workflow as cancer_myth_wf

CANCER_MYTH = oc.study_block(config, "cancer_myth")
CM_P = cancer_myth_wf.PROMPTS
CM_JURY = cancer_myth_wf.jurors(
    CANCER_MYTH
)  # the verifier: one model, or a jury of several
CM_VERIFIER = CM_JURY[0] if CM_JURY else "NO_VERIFIER"
CM_JUROR_PATTERN = "|".join(re.escape(m) for m in CM_JURY) or "NO_JURORS"
CM_CLASSIFIER = CANCER_MYTH["judges"]["classifier"] or "NO_CLASSIFIER"
CM_GENERATOR_PATTERN = "|".join(re.escape(m) for m in sorted(MODELS)) or "NO_MODELS"


localrules:
    cancer_myth_prepare,
    cancer_myth_requests,
    cancer_myth_verify_requests,
    cancer_myth_retry_requests,
    cancer_myth_parse,
    cancer_myth_score,
    cancer_myth_aggregate,
    cancer_myth_validate_requests,
    cancer_myth_judge_agreement,
    cancer_myth_adjudication_sheet,
    cancer_myth_construct_myths,
    cancer_myth_construct_init,
    cancer_myth_construct_generate_requests,
    cancer_myth_construct_respond_requests,
    cancer_myth_construct_verify_requests,
    cancer_myth_construct_update,
    cancer_myth_construct_collect,
    cancer_myth_construct_categorize_requests,
    cancer_myth_construct_dataset,


# ---------------------------------------------------------------- evaluation


rule cancer_myth_prepare:
    input:
        CANCER_MYTH["questions"] or [],
    output:
        cancer_myth_wf.ITEMS,
    log:
        cancer_myth_wf.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        limit=ITEM_LIMIT,
    script:
        "../scripts/cancer_myth/prepare.py"


rule cancer_myth_requests:
    input:
        questions=cancer_myth_wf.ITEMS,
    output:
        cancer_myth_wf.paths.requests("answer"),
    log:
        cancer_myth_wf.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        system_prompt=CANCER_MYTH["system_prompt"],
        max_new_tokens=CANCER_MYTH["answer_max_new_tokens"],
    script:
        "../scripts/cancer_myth/requests.py"


rule cancer_myth_verify_requests:
    input:
        questions=cancer_myth_wf.ITEMS,
        answers=cancer_myth_wf.paths.responses("{model}", "answer"),
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CANCER_MYTH["verifier_examples"],
    output:
        cancer_myth_wf.paths.requests("verify--{model}"),
    log:
        cancer_myth_wf.paths.log("verify_requests", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CANCER_MYTH["verifier_max_new_tokens"],
        structured=CANCER_MYTH["structured_verdicts"],
    script:
        "../scripts/cancer_myth/verify_requests.py"


rule cancer_myth_validate_requests:
    input:
        human=CANCER_MYTH["human_scores"] or [],
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CANCER_MYTH["verifier_examples"],
    output:
        cancer_myth_wf.paths.requests("validate"),
    log:
        cancer_myth_wf.paths.log("validate_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CANCER_MYTH["verifier_max_new_tokens"],
        structured=CANCER_MYTH["structured_verdicts"],
    script:
        "../scripts/cancer_myth/validate_requests.py"


rule cancer_myth_retry_requests:
    input:
        requests=cancer_myth_wf.paths.requests("{stage}{rest}"),
        # A jury's retries are per juror ({stage}-retry-by-{juror}{rest}): each quotes its own reply.
        responses=lambda wc: cancer_myth_wf.paths.responses(
            wc.by.removeprefix("-by-")
            or cancer_myth_wf.verifier_of_set(
                CANCER_MYTH, CM_VERIFIER, wc.stage, wc.rest
            ),
            f"{wc.stage}{wc.rest}",
        ),
        reminder=f"{CM_P}/verifier_reminder.txt",
    output:
        cancer_myth_wf.paths.requests("{stage}-retry{by}{rest}"),
    log:
        cancer_myth_wf.paths.log("retry_requests", "{stage}{by}{rest}"),
    wildcard_constraints:
        # Evaluation (verify--{model}), judge validation, and each construction step's verdicts.
        stage=rf"verify|validate|construct-({CM_GENERATOR_PATTERN})-m\d+-verify",
        # One verifier: always empty (an empty constraint string would mean "anything").
        by=rf"(-by-({CM_JUROR_PATTERN}))?" if len(CM_JURY) > 1 else r"(?:)",
        rest=r"(--[A-Za-z0-9._-]+)?",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/retry_requests.py"


rule cancer_myth_parse:
    input:
        questions=cancer_myth_wf.ITEMS,
        answers=cancer_myth_wf.paths.responses("{model}", "answer"),
        # A model's own verifier (verifier_for) where the config names one, else the study's.
        first=lambda wc: cancer_myth_wf.answer_verdict_files(
            CANCER_MYTH, CM_JURY, wc.model
        )["first"],
        retry=lambda wc: cancer_myth_wf.answer_verdict_files(
            CANCER_MYTH, CM_JURY, wc.model
        )["retry"],
    output:
        **cancer_myth_wf.OUTPUTS_PARSE,
    log:
        cancer_myth_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=lambda wc: cancer_myth_wf.jury_for(CANCER_MYTH, CM_JURY, wc.model),
        combine=CANCER_MYTH["jury_combine"],
    script:
        "../scripts/cancer_myth/parse.py"


rule cancer_myth_score:
    input:
        judged=cancer_myth_wf.OUTPUTS_PARSE["judged"],
    output:
        **cancer_myth_wf.OUTPUTS_SCORE,
    log:
        cancer_myth_wf.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=lambda wc: cancer_myth_wf.jury_for(CANCER_MYTH, CM_JURY, wc.model),
        combine=CANCER_MYTH["jury_combine"],
    script:
        "../scripts/cancer_myth/score.py"


rule cancer_myth_aggregate:
    input:
        scores=expand(
            cancer_myth_wf.OUTPUTS_SCORE["scores"],
            model=run_wf.evaluated_models(config, "cancer_myth"),
        ),
        validation=(
            cancer_myth_wf.OUTPUTS_JUDGE_AGREEMENT["verifier_pairs"]
            if CANCER_MYTH["human_scores"]
            else []
        ),
    output:
        **cancer_myth_wf.OUTPUTS_AGGREGATE,
    log:
        cancer_myth_wf.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=run_wf.evaluated_models(config, "cancer_myth"),
        # Rows judged by their own verifier (verifier_for): the validation does not correct them.
        own_verifier=CANCER_MYTH["verifier_for"] or {},
        bootstrap=config["bootstrap"],
        judge_correction=config.get("judge_correction", {}),
    script:
        "../scripts/cancer_myth/aggregate.py"


rule cancer_myth_judge_agreement:
    input:
        human=CANCER_MYTH["human_scores"] or [],
        # A filled adjudication sheet adds labels; the verdicts come from the judged answers.
        adjudicated=CANCER_MYTH["adjudicated"] or [],
        judged=(
            expand(
                cancer_myth_wf.OUTPUTS_PARSE["judged"],
                model=run_wf.evaluated_models(config, "cancer_myth"),
            )
            if CANCER_MYTH["adjudicated"]
            else []
        ),
        first=cancer_myth_wf.verdict_files(CM_JURY, "validate", "")["first"],
        retry=cancer_myth_wf.verdict_files(CM_JURY, "validate", "")["retry"],
    output:
        **cancer_myth_wf.OUTPUTS_JUDGE_AGREEMENT,
    log:
        cancer_myth_wf.paths.log("judge_agreement"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=(
            run_wf.evaluated_models(config, "cancer_myth")
            if CANCER_MYTH["adjudicated"]
            else []
        ),
        verifier=CM_JURY,
        combine=CANCER_MYTH["jury_combine"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/cancer_myth/judge_agreement.py"


rule cancer_myth_adjudication_sheet:
    input:
        judged=expand(
            cancer_myth_wf.OUTPUTS_PARSE["judged"],
            model=run_wf.evaluated_models(config, "cancer_myth"),
        ),
    output:
        **cancer_myth_wf.OUTPUTS_ADJUDICATION,
    log:
        cancer_myth_wf.paths.log("adjudication_sheet"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=run_wf.evaluated_models(config, "cancer_myth"),
        max_items=CANCER_MYTH["adjudication"]["max_items"],
        seed=CANCER_MYTH["adjudication"]["seed"],
    script:
        "../scripts/cancer_myth/adjudication_sheet.py"


# ---------------------------------------------------------------- construction (opt-in)
# One chain of steps per generator: myth i reads the pools after myth i-1 and writes its own
# pools file, so a killed run resumes at the next myth. Every model call goes through `generate`
# with request sets construct-{generator}-m{index}-{generate,respond,verify}.


rule cancer_myth_construct_myths:
    input:
        CANCER_MYTH["construction"]["myths"] or [],
    output:
        cancer_myth_wf.MYTHS,
    log:
        cancer_myth_wf.paths.log("construct", "myths"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_myths=CANCER_MYTH["construction"]["max_myths"],
    script:
        "../scripts/cancer_myth/construct_myths.py"


rule cancer_myth_construct_init:
    input:
        valid=CANCER_MYTH["construction"]["initial_valid"],
        invalid=CANCER_MYTH["construction"]["initial_invalid"],
    output:
        cancer_myth_wf.pools("{generator}", "init"),
    log:
        cancer_myth_wf.paths.log("construct", "{generator}", "init"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_init.py"


rule cancer_myth_construct_generate_requests:
    input:
        pools=lambda wc: cancer_myth_wf.pools_before(wc.generator, wc.index),
        myths=cancer_myth_wf.MYTHS,
        template=f"{CM_P}/generator.txt",
    output:
        cancer_myth_wf.paths.requests(
            cancer_myth_wf.construct_set("{generator}", "{index}", "generate")
        ),
    log:
        cancer_myth_wf.paths.log("construct", "{generator}", "m{index}-generate"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cancer_myth_wf.construction_params(CANCER_MYTH),
    script:
        "../scripts/cancer_myth/construct_generate_requests.py"


rule cancer_myth_construct_respond_requests:
    input:
        generated=cancer_myth_wf.paths.responses(
            "{generator}",
            cancer_myth_wf.construct_set("{generator}", "{index}", "generate"),
        ),
    output:
        cancer_myth_wf.paths.requests(
            cancer_myth_wf.construct_set("{generator}", "{index}", "respond")
        ),
    log:
        cancer_myth_wf.paths.log("construct", "{generator}", "m{index}-respond"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cancer_myth_wf.construction_params(CANCER_MYTH),
        system_prompt=CANCER_MYTH["system_prompt"],
        max_new_tokens=CANCER_MYTH["answer_max_new_tokens"],
    script:
        "../scripts/cancer_myth/construct_respond_requests.py"


rule cancer_myth_construct_verify_requests:
    input:
        answers=lambda wc: cancer_myth_wf.paths.responses(
            cancer_myth_wf.responder_of(CANCER_MYTH, wc.generator),
            cancer_myth_wf.construct_set(wc.generator, wc.index, "respond"),
        ),
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CANCER_MYTH["verifier_examples"],
    output:
        cancer_myth_wf.paths.requests(
            cancer_myth_wf.construct_set("{generator}", "{index}", "verify")
        ),
    log:
        cancer_myth_wf.paths.log("construct", "{generator}", "m{index}-verify"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CANCER_MYTH["verifier_max_new_tokens"],
        structured=CANCER_MYTH["structured_verdicts"],
    script:
        "../scripts/cancer_myth/construct_verify_requests.py"


rule cancer_myth_construct_update:
    input:
        pools=lambda wc: cancer_myth_wf.pools_before(wc.generator, wc.index),
        myths=cancer_myth_wf.MYTHS,
        generated=cancer_myth_wf.paths.responses(
            "{generator}",
            cancer_myth_wf.construct_set("{generator}", "{index}", "generate"),
        ),
        answers=lambda wc: cancer_myth_wf.paths.responses(
            cancer_myth_wf.responder_of(CANCER_MYTH, wc.generator),
            cancer_myth_wf.construct_set(wc.generator, wc.index, "respond"),
        ),
        verdicts=cancer_myth_wf.paths.responses(
            CM_VERIFIER,
            cancer_myth_wf.construct_set("{generator}", "{index}", "verify"),
        ),
        retry=cancer_myth_wf.paths.responses(
            CM_VERIFIER,
            cancer_myth_wf.construct_set("{generator}", "{index}", "verify-retry"),
        ),
    output:
        pools=cancer_myth_wf.pools("{generator}", "m{index}"),
        steps=cancer_myth_wf.steps("{generator}", "{index}"),
    log:
        cancer_myth_wf.paths.log("construct", "{generator}", "m{index}-update"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cancer_myth_wf.construction_params(CANCER_MYTH),
        responder=lambda wc: cancer_myth_wf.responder_of(CANCER_MYTH, wc.generator),
        verifier=CM_VERIFIER,
    script:
        "../scripts/cancer_myth/construct_update.py"


rule cancer_myth_construct_collect:
    input:
        steps=lambda wc: cancer_myth_wf.final_steps(CANCER_MYTH),
        pools=lambda wc: cancer_myth_wf.final_pools(CANCER_MYTH),
    output:
        generated=cancer_myth_wf.OUTPUTS_CONSTRUCTION["generated"],
        candidates=cancer_myth_wf.OUTPUTS_CONSTRUCTION["candidates"],
    log:
        cancer_myth_wf.paths.log("construct", "collect"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_collect.py"


rule cancer_myth_construct_categorize_requests:
    input:
        candidates=cancer_myth_wf.OUTPUTS_CONSTRUCTION["candidates"],
        template=f"{CM_P}/classifier.txt",
        example_template=f"{CM_P}/classifier_example.txt",
        examples=CANCER_MYTH["construction"]["classifier_examples"],
    output:
        cancer_myth_wf.paths.requests("construct-categorize"),
    log:
        cancer_myth_wf.paths.log("construct", "categorize_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CANCER_MYTH["construction"]["classifier_max_new_tokens"],
    script:
        "../scripts/cancer_myth/construct_categorize_requests.py"


rule cancer_myth_construct_dataset:
    input:
        candidates=cancer_myth_wf.OUTPUTS_CONSTRUCTION["candidates"],
        classified=cancer_myth_wf.paths.responses(CM_CLASSIFIER, "construct-categorize"),
    output:
        categories=cancer_myth_wf.OUTPUTS_CONSTRUCTION["categories"],
        dataset=cancer_myth_wf.OUTPUTS_CONSTRUCTION["dataset"],
        balance=cancer_myth_wf.OUTPUTS_CONSTRUCTION["balance"],
    log:
        cancer_myth_wf.paths.log("construct", "dataset"),
    conda:
        "../envs/cpu.yaml"
    params:
        classifier=CM_CLASSIFIER,
        select_per_model=CANCER_MYTH["construction"]["select_per_model"],
        select_per_category=CANCER_MYTH["construction"]["select_per_category"],
        seed=CANCER_MYTH["construction"]["seed"],
    script:
        "../scripts/cancer_myth/construct_dataset.py"
