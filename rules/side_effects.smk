# The side_effects study (Seah et al., CHIL 2026): paired profiles x four prompting regimes,
# semantic matching against a clinician reference, Tables 1-7. Logic: oncoeval.studies.side_effects.

from oncoeval.studies.side_effects import workflow as side_effects_wf

# The study block, validated and with its schema defaults filled by common.smk.
SIDE_EFFECTS = oc.study_block(config, "side_effects")


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
        profiles=SIDE_EFFECTS["profiles"] or [],
        reference=SIDE_EFFECTS["reference"] or [],
        site_aliases=SIDE_EFFECTS["site_aliases"],
        side_effect_aliases=SIDE_EFFECTS["side_effect_aliases"],
    output:
        **side_effects_wf.PREPARED,
    log:
        side_effects_wf.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        form=SIDE_EFFECTS["profiles_form"],
        limit=ITEM_LIMIT,
        site_assignment=SIDE_EFFECTS["site_assignment"],
        site_phrases=SIDE_EFFECTS["site_phrases"],
        specify_mentions=SIDE_EFFECTS["specify_mentions"],
    script:
        "../scripts/side_effects/prepare.py"


rule side_effects_requests:
    input:
        profiles=side_effects_wf.PREPARED["profiles"],
        vocabulary=side_effects_wf.PREPARED["vocabulary"],
        templates=lambda wc: list(side_effects_wf.templates(SIDE_EFFECTS).values()),
    output:
        side_effects_wf.paths.requests(side_effects_wf.LISTS),
    log:
        side_effects_wf.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        regimes=SIDE_EFFECTS["regimes"],
        list_size=SIDE_EFFECTS["list_size"],
        max_new_tokens=SIDE_EFFECTS["max_new_tokens"],
    script:
        "../scripts/side_effects/requests.py"


rule side_effects_parse:
    input:
        side_effects_wf.paths.responses("{model}", side_effects_wf.LISTS),
    output:
        side_effects_wf.paths.parsed("{model}"),
    log:
        side_effects_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/parse.py"


rule side_effects_matcher_requests:
    input:
        parsed=side_effects_wf.paths.parsed("{model}"),
        reference=side_effects_wf.PREPARED["reference"],
        template=f"{side_effects_wf.PROMPTS}/match_llm.txt",
    output:
        side_effects_wf.paths.requests("match--{model}"),
    log:
        side_effects_wf.paths.log("matcher_requests", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=SIDE_EFFECTS["matcher"]["judge_max_new_tokens"],
    script:
        "../scripts/side_effects/matcher_requests.py"


rule side_effects_match:
    input:
        unpack(lambda wc: side_effects_wf.match_inputs(SIDE_EFFECTS, wc.model)),
    output:
        side_effects_wf.paths("matches", "{model}.jsonl"),
    log:
        side_effects_wf.paths.log("match", "{model}"),
    benchmark:
        "benchmarks/side_effects/match/{model}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        matcher=lambda wc: side_effects_wf.matcher_params(SIDE_EFFECTS),
    script:
        "../scripts/side_effects/match.py"


rule side_effects_score:
    input:
        parsed=side_effects_wf.paths.parsed("{model}"),
        matches=side_effects_wf.paths("matches", "{model}.jsonl"),
        reference=side_effects_wf.PREPARED["reference"],
    output:
        **side_effects_wf.OUTPUTS_SCORE,
    log:
        side_effects_wf.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/score.py"


rule side_effects_aggregate:
    input:
        scores=lambda wc: expand(
            side_effects_wf.OUTPUTS_SCORE["scores"],
            model=run_wf.evaluated_models(config, "side_effects"),
        ),
        overlaps=lambda wc: expand(
            side_effects_wf.OUTPUTS_SCORE["overlap"],
            model=run_wf.evaluated_models(config, "side_effects"),
        ),
    output:
        **side_effects_wf.OUTPUTS_AGGREGATE,
    log:
        side_effects_wf.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.evaluated_models(config, "side_effects"),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/aggregate.py"


rule side_effects_matcher_validation_requests:
    input:
        validation=SIDE_EFFECTS["validation"],
        template=f"{side_effects_wf.PROMPTS}/match_llm.txt",
    output:
        side_effects_wf.paths.requests("validation"),
    log:
        side_effects_wf.paths.log("matcher_validation_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=SIDE_EFFECTS["matcher"]["judge_max_new_tokens"],
    script:
        "../scripts/side_effects/matcher_validation_requests.py"


rule side_effects_matcher_validation:
    input:
        unpack(lambda wc: side_effects_wf.validation_inputs(SIDE_EFFECTS)),
    output:
        **side_effects_wf.OUTPUTS_VALIDATION,
    log:
        side_effects_wf.paths.log("matcher_validation"),
    benchmark:
        "benchmarks/side_effects/matcher_validation.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        methods=lambda wc: side_effects_wf.validation_methods(SIDE_EFFECTS),
        matcher=SIDE_EFFECTS["matcher"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/matcher_validation.py"
