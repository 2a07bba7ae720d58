# Cancer-Myth: zero-shot answers scored -1/0/1 by a verifier (Figure 13), PCS/PCR tables, judge
# validation; and, with `construct: true`, the generator / responder / verifier construction loop.
# Logic: oncoeval/studies/cancer_myth/ (the rules' side: workflow.py). The verifier's request sets
# are named by their step: verify (answers), validate (human-scored answers), retry.

import re

from oncoeval.errors import OncoEvalError
from oncoeval.studies.cancer_myth import workflow as cm

CM = config["studies"]["cancer_myth"]
CM_P = cm.PROMPTS
cm.check_settings(CM)
CM_JURY = cm.jurors(CM)  # the verifier: one model, or a jury of several
CM_VERIFIER = CM_JURY[0] if CM_JURY else "NO_VERIFIER"
CM_JUROR_PATTERN = "|".join(re.escape(m) for m in CM_JURY) or "NO_JURORS"
CM_CLASSIFIER = judge_model("cancer_myth", "classifier") or "NO_CLASSIFIER"
CM_GENERATOR_PATTERN = "|".join(re.escape(m) for m in sorted(MODELS)) or "NO_MODELS"
# Every construction input is read and checked now, before any job (and any model call) runs.
if study_enabled("cancer_myth") and CM["construct"]:
    try:
        cm.check_construction_inputs(CM)
    except (OncoEvalError, OSError) as exc:
        raise WorkflowError(f"cancer_myth construction input: {exc}") from None


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
        CM["questions"] or [],
    output:
        cm.ITEMS,
    log:
        cm.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        limit=ITEM_LIMIT,
    script:
        "../scripts/cancer_myth/prepare.py"


rule cancer_myth_requests:
    input:
        questions=cm.ITEMS,
    output:
        cm.paths.requests("answer"),
    log:
        cm.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        system_prompt=CM["system_prompt"],
        max_new_tokens=CM["answer_max_new_tokens"],
    script:
        "../scripts/cancer_myth/requests.py"


rule cancer_myth_verify_requests:
    input:
        questions=cm.ITEMS,
        answers=cm.paths.responses("{model}", "answer"),
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        cm.paths.requests("verify--{model}"),
    log:
        cm.paths.log("verify_requests", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["verifier_max_new_tokens"],
        structured=CM["structured_verdicts"],
    script:
        "../scripts/cancer_myth/verify_requests.py"


rule cancer_myth_validate_requests:
    input:
        human=CM["human_scores"] or [],
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        cm.paths.requests("validate"),
    log:
        cm.paths.log("validate_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["verifier_max_new_tokens"],
        structured=CM["structured_verdicts"],
    script:
        "../scripts/cancer_myth/validate_requests.py"


rule cancer_myth_retry_requests:
    input:
        requests=cm.paths.requests("{stage}{rest}"),
        # A jury's retries are per juror ({stage}-retry-by-{juror}{rest}): each quotes its own reply.
        responses=lambda wc: cm.paths.responses(
            wc.by.removeprefix("-by-")
            or cm.verifier_of_set(CM, CM_VERIFIER, wc.stage, wc.rest),
            f"{wc.stage}{wc.rest}",
        ),
        reminder=f"{CM_P}/verifier_reminder.txt",
    output:
        cm.paths.requests("{stage}-retry{by}{rest}"),
    log:
        cm.paths.log("retry_requests", "{stage}{by}{rest}"),
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
        questions=cm.ITEMS,
        answers=cm.paths.responses("{model}", "answer"),
        # A model's own verifier (verifier_for) where the config names one, else the study's.
        first=lambda wc: cm.answer_verdict_files(CM, CM_JURY, wc.model)["first"],
        retry=lambda wc: cm.answer_verdict_files(CM, CM_JURY, wc.model)["retry"],
    output:
        **cm.OUTPUTS_PARSE,
    log:
        cm.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=lambda wc: cm.jury_for(CM, CM_JURY, wc.model),
        combine=CM["jury_combine"],
    script:
        "../scripts/cancer_myth/parse.py"


rule cancer_myth_score:
    input:
        judged=cm.OUTPUTS_PARSE["judged"],
    output:
        **cm.OUTPUTS_SCORE,
    log:
        cm.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=lambda wc: cm.jury_for(CM, CM_JURY, wc.model),
        combine=CM["jury_combine"],
    script:
        "../scripts/cancer_myth/score.py"


rule cancer_myth_aggregate:
    input:
        scores=expand(cm.OUTPUTS_SCORE["scores"], model=evaluated_models("cancer_myth")),
        validation=(
            cm.OUTPUTS_JUDGE_AGREEMENT["verifier_pairs"] if CM["human_scores"] else []
        ),
    output:
        **cm.OUTPUTS_AGGREGATE,
    log:
        cm.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=evaluated_models("cancer_myth"),
        # Rows judged by their own verifier (verifier_for): the validation does not correct them.
        own_verifier=CM["verifier_for"] or {},
        bootstrap=config["bootstrap"],
        judge_correction=config.get("judge_correction", {}),
    script:
        "../scripts/cancer_myth/aggregate.py"


rule cancer_myth_judge_agreement:
    input:
        human=CM["human_scores"] or [],
        # A filled adjudication sheet adds labels; the verdicts come from the judged answers.
        adjudicated=CM["adjudicated"] or [],
        judged=(
            expand(cm.OUTPUTS_PARSE["judged"], model=evaluated_models("cancer_myth"))
            if CM["adjudicated"]
            else []
        ),
        first=cm.verdict_files(CM_JURY, "validate", "")["first"],
        retry=cm.verdict_files(CM_JURY, "validate", "")["retry"],
    output:
        **cm.OUTPUTS_JUDGE_AGREEMENT,
    log:
        cm.paths.log("judge_agreement"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=evaluated_models("cancer_myth") if CM["adjudicated"] else [],
        verifier=CM_JURY,
        combine=CM["jury_combine"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/cancer_myth/judge_agreement.py"


rule cancer_myth_adjudication_sheet:
    input:
        judged=expand(cm.OUTPUTS_PARSE["judged"], model=evaluated_models("cancer_myth")),
    output:
        **cm.OUTPUTS_ADJUDICATION,
    log:
        cm.paths.log("adjudication_sheet"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=evaluated_models("cancer_myth"),
        max_items=CM["adjudication"]["max_items"],
        seed=CM["adjudication"]["seed"],
    script:
        "../scripts/cancer_myth/adjudication_sheet.py"


# ---------------------------------------------------------------- construction (opt-in)
# One chain of steps per generator: myth i reads the pools after myth i-1 and writes its own
# pools file, so a killed run resumes at the next myth. Every model call goes through `generate`
# with request sets construct-{generator}-m{index}-{generate,respond,verify}.


rule cancer_myth_construct_myths:
    input:
        CM["construction"]["myths"] or [],
    output:
        cm.MYTHS,
    log:
        cm.paths.log("construct", "myths"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_myths=CM["construction"]["max_myths"],
    script:
        "../scripts/cancer_myth/construct_myths.py"


rule cancer_myth_construct_init:
    input:
        valid=CM["construction"]["initial_valid"],
        invalid=CM["construction"]["initial_invalid"],
    output:
        cm.pools("{generator}", "init"),
    log:
        cm.paths.log("construct", "{generator}", "init"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_init.py"


rule cancer_myth_construct_generate_requests:
    input:
        pools=lambda wc: cm.pools_before(wc.generator, wc.index),
        myths=cm.MYTHS,
        template=f"{CM_P}/generator.txt",
    output:
        cm.paths.requests(cm.construct_set("{generator}", "{index}", "generate")),
    log:
        cm.paths.log("construct", "{generator}", "m{index}-generate"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cm.construction_params(CM),
    script:
        "../scripts/cancer_myth/construct_generate_requests.py"


rule cancer_myth_construct_respond_requests:
    input:
        generated=cm.paths.responses(
            "{generator}", cm.construct_set("{generator}", "{index}", "generate")
        ),
    output:
        cm.paths.requests(cm.construct_set("{generator}", "{index}", "respond")),
    log:
        cm.paths.log("construct", "{generator}", "m{index}-respond"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cm.construction_params(CM),
        system_prompt=CM["system_prompt"],
        max_new_tokens=CM["answer_max_new_tokens"],
    script:
        "../scripts/cancer_myth/construct_respond_requests.py"


rule cancer_myth_construct_verify_requests:
    input:
        answers=lambda wc: cm.paths.responses(
            cm.responder_of(CM, wc.generator),
            cm.construct_set(wc.generator, wc.index, "respond"),
        ),
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        cm.paths.requests(cm.construct_set("{generator}", "{index}", "verify")),
    log:
        cm.paths.log("construct", "{generator}", "m{index}-verify"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["verifier_max_new_tokens"],
        structured=CM["structured_verdicts"],
    script:
        "../scripts/cancer_myth/construct_verify_requests.py"


rule cancer_myth_construct_update:
    input:
        pools=lambda wc: cm.pools_before(wc.generator, wc.index),
        myths=cm.MYTHS,
        generated=cm.paths.responses(
            "{generator}", cm.construct_set("{generator}", "{index}", "generate")
        ),
        answers=lambda wc: cm.paths.responses(
            cm.responder_of(CM, wc.generator),
            cm.construct_set(wc.generator, wc.index, "respond"),
        ),
        verdicts=cm.paths.responses(
            CM_VERIFIER, cm.construct_set("{generator}", "{index}", "verify")
        ),
        retry=cm.paths.responses(
            CM_VERIFIER, cm.construct_set("{generator}", "{index}", "verify-retry")
        ),
    output:
        pools=cm.pools("{generator}", "m{index}"),
        steps=cm.steps("{generator}", "{index}"),
    log:
        cm.paths.log("construct", "{generator}", "m{index}-update"),
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
        index=r"\d+",
    conda:
        "../envs/cpu.yaml"
    params:
        construction=cm.construction_params(CM),
        responder=lambda wc: cm.responder_of(CM, wc.generator),
        verifier=CM_VERIFIER,
    script:
        "../scripts/cancer_myth/construct_update.py"


rule cancer_myth_construct_collect:
    input:
        steps=lambda wc: cm.final_steps(CM),
        pools=lambda wc: cm.final_pools(CM),
    output:
        generated=cm.OUTPUTS_CONSTRUCTION["generated"],
        candidates=cm.OUTPUTS_CONSTRUCTION["candidates"],
    log:
        cm.paths.log("construct", "collect"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_collect.py"


rule cancer_myth_construct_categorize_requests:
    input:
        candidates=cm.OUTPUTS_CONSTRUCTION["candidates"],
        template=f"{CM_P}/classifier.txt",
        example_template=f"{CM_P}/classifier_example.txt",
        examples=CM["construction"]["classifier_examples"],
    output:
        cm.paths.requests("construct-categorize"),
    log:
        cm.paths.log("construct", "categorize_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["construction"]["classifier_max_new_tokens"],
    script:
        "../scripts/cancer_myth/construct_categorize_requests.py"


rule cancer_myth_construct_dataset:
    input:
        candidates=cm.OUTPUTS_CONSTRUCTION["candidates"],
        classified=cm.paths.responses(CM_CLASSIFIER, "construct-categorize"),
    output:
        categories=cm.OUTPUTS_CONSTRUCTION["categories"],
        dataset=cm.OUTPUTS_CONSTRUCTION["dataset"],
        balance=cm.OUTPUTS_CONSTRUCTION["balance"],
    log:
        cm.paths.log("construct", "dataset"),
    conda:
        "../envs/cpu.yaml"
    params:
        classifier=CM_CLASSIFIER,
        select_per_model=CM["construction"]["select_per_model"],
        select_per_category=CM["construction"]["select_per_category"],
        seed=CM["construction"]["seed"],
    script:
        "../scripts/cancer_myth/construct_dataset.py"


STUDY_TARGETS["cancer_myth"] = lambda: cm.final_targets(config)
