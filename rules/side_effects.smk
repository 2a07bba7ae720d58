# The side_effects study (Seah et al., CHIL 2026): paired profiles x four prompting regimes,
# semantic matching against a clinician reference, Tables 1-7. Logic: oncoeval.studies.side_effects.

from oncoeval.studies.side_effects import workflow as sew

# The study block, validated and with its schema defaults filled by common.smk.
SE_BLOCK = sew.settings(config)
if study_enabled("side_effects") and sew.config_problem(config):
    raise WorkflowError(f"config: {sew.config_problem(config)}")


localrules:
    side_effects_prepare,
    side_effects_requests,
    side_effects_parse,
    side_effects_matcher_requests,
    side_effects_matcher_validation_requests,
    side_effects_score,
    side_effects_aggregate,


rule side_effects_prepare:
    input:
        profiles=SE_BLOCK["profiles"] or [],
        reference=SE_BLOCK["reference"] or [],
        site_aliases=SE_BLOCK["site_aliases"],
        side_effect_aliases=SE_BLOCK["side_effect_aliases"],
    output:
        **sew.PREPARED,
    log:
        sew.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        form=SE_BLOCK["profiles_form"],
        limit=ITEM_LIMIT,
        site_assignment=SE_BLOCK["site_assignment"],
        site_phrases=SE_BLOCK["site_phrases"],
        specify_mentions=SE_BLOCK["specify_mentions"],
    script:
        "../scripts/side_effects/prepare.py"


rule side_effects_requests:
    input:
        profiles=sew.PREPARED["profiles"],
        vocabulary=sew.PREPARED["vocabulary"],
        templates=lambda wc: list(sew.templates(config).values()),
    output:
        sew.paths.requests(sew.LISTS),
    log:
        sew.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        regimes=SE_BLOCK["regimes"],
        list_size=SE_BLOCK["list_size"],
        max_new_tokens=SE_BLOCK["max_new_tokens"],
    script:
        "../scripts/side_effects/requests.py"


rule side_effects_parse:
    input:
        sew.paths.responses("{model}", sew.LISTS),
    output:
        sew.paths.parsed("{model}"),
    log:
        sew.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/parse.py"


rule side_effects_matcher_requests:
    input:
        parsed=sew.paths.parsed("{model}"),
        reference=sew.PREPARED["reference"],
        template=f"{sew.PROMPTS}/match_llm.txt",
    output:
        sew.paths.requests("match--{model}"),
    log:
        sew.paths.log("matcher_requests", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=SE_BLOCK["matcher"]["judge_max_new_tokens"],
    script:
        "../scripts/side_effects/matcher_requests.py"


rule side_effects_match:
    input:
        unpack(lambda wc: sew.match_inputs(config, wc.model)),
    output:
        sew.paths("matches", "{model}.jsonl"),
    log:
        sew.paths.log("match", "{model}"),
    benchmark:
        "benchmarks/side_effects/match/{model}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        matcher=lambda wc: sew.matcher_params(config),
    script:
        "../scripts/side_effects/match.py"


rule side_effects_score:
    input:
        parsed=sew.paths.parsed("{model}"),
        matches=sew.paths("matches", "{model}.jsonl"),
        reference=sew.PREPARED["reference"],
    output:
        **sew.OUTPUTS_SCORE,
    log:
        sew.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/score.py"


rule side_effects_aggregate:
    input:
        scores=lambda wc: expand(
            sew.OUTPUTS_SCORE["scores"], model=evaluated_models("side_effects")
        ),
        overlaps=lambda wc: expand(
            sew.OUTPUTS_SCORE["overlap"], model=evaluated_models("side_effects")
        ),
    output:
        **sew.OUTPUTS_AGGREGATE,
    log:
        sew.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: evaluated_models("side_effects"),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/aggregate.py"


rule side_effects_matcher_validation_requests:
    input:
        validation=SE_BLOCK["validation"],
        template=f"{sew.PROMPTS}/match_llm.txt",
    output:
        sew.paths.requests("validation"),
    log:
        sew.paths.log("matcher_validation_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=SE_BLOCK["matcher"]["judge_max_new_tokens"],
    script:
        "../scripts/side_effects/matcher_validation_requests.py"


rule side_effects_matcher_validation:
    input:
        unpack(lambda wc: sew.validation_inputs(config)),
    output:
        **sew.OUTPUTS_VALIDATION,
    log:
        sew.paths.log("matcher_validation"),
    benchmark:
        "benchmarks/side_effects/matcher_validation.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        methods=lambda wc: sew.validation_methods(config),
        matcher=SE_BLOCK["matcher"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/matcher_validation.py"


STUDY_TARGETS["side_effects"] = lambda: sew.final_targets(config)
