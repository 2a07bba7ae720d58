# Cancer-Myth: zero-shot answers scored -1/0/1 by a verifier (Figure 13), PCS/PCR tables, judge
# validation; and, with `construct: true`, the generator / responder / verifier construction loop.
# Logic: oncoeval/studies/cancer_myth/.

import re

from oncoeval.errors import OncoEvalError
from oncoeval.studies.cancer_myth import workflow as cm

CM = cm.settings(config)
CM_R = cm.R
CM_P = cm.PROMPTS
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
    cancer_myth_answer_requests,
    cancer_myth_verify_requests,
    cancer_myth_retry_requests,
    cancer_myth_score,
    cancer_myth_tables,
    cancer_myth_validation_requests,
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
        f"{CM_R}/items.jsonl",
    log:
        "logs/cancer_myth/prepare.log",
    conda:
        "../envs/cpu.yaml"
    params:
        limit=ITEM_LIMIT,
    script:
        "../scripts/cancer_myth/prepare.py"


rule cancer_myth_answer_requests:
    input:
        questions=f"{CM_R}/items.jsonl",
    output:
        f"{CM_R}/requests/answer.jsonl",
    log:
        "logs/cancer_myth/answer_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        system_prompt=CM["system_prompt"],
        max_new_tokens=CM["answer_max_new_tokens"],
    script:
        "../scripts/cancer_myth/answer_requests.py"


rule cancer_myth_verify_requests:
    input:
        questions=f"{CM_R}/items.jsonl",
        answers=f"{CM_R}/responses/{{model}}/answer.jsonl",
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        f"{CM_R}/requests/verify--{{model}}.jsonl",
    log:
        "logs/cancer_myth/verify_requests/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["verifier_max_new_tokens"],
        structured=CM["structured_verdicts"],
    script:
        "../scripts/cancer_myth/verify_requests.py"


rule cancer_myth_validation_requests:
    input:
        human=CM["human_scores"] or [],
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        f"{CM_R}/requests/validate.jsonl",
    log:
        "logs/cancer_myth/validation_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["verifier_max_new_tokens"],
        structured=CM["structured_verdicts"],
    script:
        "../scripts/cancer_myth/validation_requests.py"


rule cancer_myth_retry_requests:
    input:
        requests=f"{CM_R}/requests/{{stage}}{{rest}}.jsonl",
        # A jury's retries are per juror ({stage}-retry-by-{juror}{rest}): each quotes its own reply.
        responses=lambda wc: f"{CM_R}/responses/{wc.by.removeprefix('-by-') or cm.verifier_of_set(CM, CM_VERIFIER, wc.stage, wc.rest)}/{wc.stage}{wc.rest}.jsonl",
        reminder=f"{CM_P}/verifier_reminder.txt",
    output:
        f"{CM_R}/requests/{{stage}}-retry{{by}}{{rest}}.jsonl",
    log:
        "logs/cancer_myth/retry_requests/{stage}{by}{rest}.log",
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


rule cancer_myth_score:
    input:
        questions=f"{CM_R}/items.jsonl",
        answers=f"{CM_R}/responses/{{model}}/answer.jsonl",
        # A model's own verifier (verifier_for) where the config names one, else the study's.
        first=lambda wc: cm.answer_verdict_files(CM, CM_JURY, wc.model)["first"],
        retry=lambda wc: cm.answer_verdict_files(CM, CM_JURY, wc.model)["retry"],
    output:
        scores=f"{CM_R}/scores/{{model}}.tsv",
        judged=f"{CM_R}/judged/{{model}}.jsonl",
    log:
        "logs/cancer_myth/score/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=lambda wc: cm.jury_for(CM, CM_JURY, wc.model),
        combine=CM["jury_combine"],
    script:
        "../scripts/cancer_myth/score.py"


rule cancer_myth_tables:
    input:
        scores=expand(
            f"{CM_R}/scores/{{model}}.tsv", model=evaluated_models("cancer_myth")
        ),
        validation=f"{CM_R}/validation/verifier_pairs.tsv" if CM["human_scores"] else [],
    output:
        pcs_pcr=f"{CM_R}/tables/pcs_pcr.tsv",
        pcs_pcr_md=f"{CM_R}/tables/pcs_pcr.md",
        by_category=f"{CM_R}/tables/pcs_by_category.tsv",
        by_category_md=f"{CM_R}/tables/pcs_by_category.md",
        by_generator=f"{CM_R}/tables/pcs_by_generator.tsv",
        by_generator_md=f"{CM_R}/tables/pcs_by_generator.md",
        pairwise=f"{CM_R}/tables/pairwise.tsv",
        pairwise_md=f"{CM_R}/tables/pairwise.md",
        jury=f"{CM_R}/tables/jury_agreement.tsv",
        jury_md=f"{CM_R}/tables/jury_agreement.md",
        fig_overall=f"{CM_R}/figures/pcs_pcr.png",
        fig_category=f"{CM_R}/figures/pcs_by_category.png",
        fig_generator=f"{CM_R}/figures/pcs_by_generator.png",
    log:
        "logs/cancer_myth/tables.log",
    conda:
        "../envs/cpu.yaml"
    params:
        correction=CM["multiple_testing"],
        # Rows judged by their own verifier (verifier_for): the validation does not correct them.
        own_verifier=CM.get("verifier_for") or {},
        bootstrap=config["bootstrap"],
        judge_correction=config.get("judge_correction", {}),
    script:
        "../scripts/cancer_myth/tables.py"


rule cancer_myth_judge_agreement:
    input:
        human=CM["human_scores"] or [],
        # A filled adjudication sheet adds labels; the verdicts come from the judged answers.
        adjudicated=CM["adjudicated"] or [],
        judged=(
            expand(
                f"{CM_R}/judged/{{model}}.jsonl", model=evaluated_models("cancer_myth")
            )
            if CM["adjudicated"]
            else []
        ),
        first=cm.verdict_files(CM_JURY, "validate", "")["first"],
        retry=cm.verdict_files(CM_JURY, "validate", "")["retry"],
    output:
        tsv=f"{CM_R}/tables/judge_agreement.tsv",
        md=f"{CM_R}/tables/judge_agreement.md",
        confusion=f"{CM_R}/tables/judge_confusion.tsv",
        confusion_md=f"{CM_R}/tables/judge_confusion.md",
        pairs=f"{CM_R}/validation/verifier_pairs.tsv",
        per_class=f"{CM_R}/tables/judge_per_class.tsv",
        per_class_md=f"{CM_R}/tables/judge_per_class.md",
    log:
        "logs/cancer_myth/judge_agreement.log",
    conda:
        "../envs/cpu.yaml"
    params:
        verifier=CM_JURY,
        combine=CM["jury_combine"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/cancer_myth/judge_agreement.py"


rule cancer_myth_adjudication_sheet:
    input:
        judged=expand(
            f"{CM_R}/judged/{{model}}.jsonl", model=evaluated_models("cancer_myth")
        ),
    output:
        sheet=f"{CM_R}/adjudication/sheet.tsv",
        key=f"{CM_R}/adjudication/key.tsv",
    log:
        "logs/cancer_myth/adjudication_sheet.log",
    conda:
        "../envs/cpu.yaml"
    params:
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
        f"{CM_R}/construction/myths.jsonl",
    log:
        "logs/cancer_myth/construct/myths.log",
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
        f"{CM_R}/construction/{{generator}}/pools/init.json",
    log:
        "logs/cancer_myth/construct/{generator}/init.log",
    wildcard_constraints:
        generator=CM_GENERATOR_PATTERN,
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_init.py"


rule cancer_myth_construct_generate_requests:
    input:
        pools=lambda wc: cm.pools_before(wc.generator, wc.index),
        myths=f"{CM_R}/construction/myths.jsonl",
        template=f"{CM_P}/generator.txt",
    output:
        f"{CM_R}/requests/construct-{{generator}}-m{{index}}-generate.jsonl",
    log:
        "logs/cancer_myth/construct/{generator}/m{index}-generate.log",
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
        generated=f"{CM_R}/responses/{{generator}}/construct-{{generator}}-m{{index}}-generate.jsonl",
    output:
        f"{CM_R}/requests/construct-{{generator}}-m{{index}}-respond.jsonl",
    log:
        "logs/cancer_myth/construct/{generator}/m{index}-respond.log",
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
        answers=lambda wc: f"{CM_R}/responses/{cm.responder_of(CM, wc.generator)}/construct-{wc.generator}-m{wc.index}-respond.jsonl",
        template=f"{CM_P}/verifier.txt",
        example_template=f"{CM_P}/verifier_example.txt",
        examples=CM["verifier_examples"],
    output:
        f"{CM_R}/requests/construct-{{generator}}-m{{index}}-verify.jsonl",
    log:
        "logs/cancer_myth/construct/{generator}/m{index}-verify.log",
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
        myths=f"{CM_R}/construction/myths.jsonl",
        generated=f"{CM_R}/responses/{{generator}}/construct-{{generator}}-m{{index}}-generate.jsonl",
        answers=lambda wc: f"{CM_R}/responses/{cm.responder_of(CM, wc.generator)}/construct-{wc.generator}-m{wc.index}-respond.jsonl",
        verdicts=f"{CM_R}/responses/{CM_VERIFIER}/construct-{{generator}}-m{{index}}-verify.jsonl",
        retry=f"{CM_R}/responses/{CM_VERIFIER}/construct-{{generator}}-m{{index}}-verify-retry.jsonl",
    output:
        pools=f"{CM_R}/construction/{{generator}}/pools/m{{index}}.json",
        steps=f"{CM_R}/construction/{{generator}}/steps/m{{index}}.jsonl",
    log:
        "logs/cancer_myth/construct/{generator}/m{index}-update.log",
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
        generated=f"{CM_R}/construction/generated.jsonl",
        candidates=f"{CM_R}/construction/candidates.jsonl",
    log:
        "logs/cancer_myth/construct/collect.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/cancer_myth/construct_collect.py"


rule cancer_myth_construct_categorize_requests:
    input:
        candidates=f"{CM_R}/construction/candidates.jsonl",
        template=f"{CM_P}/classifier.txt",
        example_template=f"{CM_P}/classifier_example.txt",
        examples=CM["construction"]["classifier_examples"],
    output:
        f"{CM_R}/requests/construct-categorize.jsonl",
    log:
        "logs/cancer_myth/construct/categorize_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        max_new_tokens=CM["construction"]["classifier_max_new_tokens"],
    script:
        "../scripts/cancer_myth/construct_categorize_requests.py"


rule cancer_myth_construct_dataset:
    input:
        candidates=f"{CM_R}/construction/candidates.jsonl",
        classified=f"{CM_R}/responses/{CM_CLASSIFIER}/construct-categorize.jsonl",
    output:
        categories=f"{CM_R}/construction/categories.jsonl",
        dataset=f"{CM_R}/construction/dataset.json",
        balance=f"{CM_R}/construction/balance.tsv",
    log:
        "logs/cancer_myth/construct/dataset.log",
    conda:
        "../envs/cpu.yaml"
    params:
        classifier=CM_CLASSIFIER,
        select_per_model=CM["construction"]["select_per_model"],
        select_per_category=CM["construction"]["select_per_category"],
        seed=CM["construction"]["seed"],
    script:
        "../scripts/cancer_myth/construct_dataset.py"


STUDY_TARGETS["cancer_myth"] = lambda: (
    expand(f"{CM_R}/scores/{{model}}.tsv", model=evaluated_models("cancer_myth"))
    + [f"{CM_R}/tables/{t}.{ext}" for t in cm.TABLES for ext in ("tsv", "md")]
    + [f"{CM_R}/figures/{f}.png" for f in cm.FIGURES]
    + [f"{CM_R}/adjudication/sheet.tsv"]
    + (
        [
            f"{CM_R}/tables/judge_{t}.{ext}"
            for t in ("agreement", "confusion", "per_class")
            for ext in ("tsv", "md")
        ]
        if CM["human_scores"]
        else []
    )
    + (cm.construction_targets(CM) if CM["construct"] else [])
)
