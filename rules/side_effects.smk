# The side_effects study (Seah et al., CHIL 2026): paired profiles x four prompting regimes,
# semantic matching against a clinician reference, Tables 1-7. Logic: oncoeval.studies.side_effects.

from oncoeval.studies.side_effects import workflow as sew

SE = sew.ROOT
# Fill the study block's schema defaults once (validate() does not reach into $ref'd schemas).
config.setdefault("studies", {})["side_effects"] = sew.block(config)
SE_BLOCK = sew.block(config)
if study_enabled("side_effects") and sew.config_problem(config):
    raise WorkflowError(f"config: {sew.config_problem(config)}")


localrules:
    side_effects_prepare,
    side_effects_requests,
    side_effects_parse,
    side_effects_judge_requests,
    side_effects_validation_requests,
    side_effects_score,
    side_effects_tables,


rule side_effects_prepare:
    input:
        profiles=SE_BLOCK.get("profiles") or [],
        reference=SE_BLOCK.get("reference") or [],
        site_aliases=SE_BLOCK.get("site_aliases", []),
        side_effect_aliases=SE_BLOCK.get("side_effect_aliases", []),
    output:
        profiles=f"{SE}/prepared/profiles.jsonl",
        reference=f"{SE}/prepared/reference.tsv",
        vocabulary=f"{SE}/prepared/vocabulary.txt",
    log:
        "logs/side_effects/prepare.log",
    conda:
        "../envs/cpu.yaml"
    params:
        form=SE_BLOCK.get("profiles_form"),
        limit=ITEM_LIMIT,
        site_assignment=SE_BLOCK.get("site_assignment"),
        site_phrases=SE_BLOCK.get("site_phrases"),
        specify_mentions=SE_BLOCK.get("specify_mentions"),
    script:
        "../scripts/side_effects/prepare.py"


rule side_effects_requests:
    input:
        profiles=f"{SE}/prepared/profiles.jsonl",
        vocabulary=f"{SE}/prepared/vocabulary.txt",
        templates=lambda wc: list(sew.templates(config).values()),
    output:
        f"{SE}/requests/{sew.LISTS}.jsonl",
    log:
        "logs/side_effects/requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        regimes=SE_BLOCK.get("regimes"),
        list_size=SE_BLOCK.get("list_size"),
        max_new_tokens=SE_BLOCK.get("max_new_tokens"),
    script:
        "../scripts/side_effects/requests.py"


rule side_effects_parse:
    input:
        f"{SE}/responses/{{model}}/{sew.LISTS}.jsonl",
    output:
        f"{SE}/parsed/{{model}}.jsonl",
    log:
        "logs/side_effects/parse/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/parse.py"


rule side_effects_judge_requests:
    input:
        parsed=f"{SE}/parsed/{{model}}.jsonl",
        reference=f"{SE}/prepared/reference.tsv",
        template=f"{sew.PROMPTS}/match_llm.txt",
    output:
        f"{SE}/requests/match--{{model}}.jsonl",
    log:
        "logs/side_effects/judge_requests/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=lambda wc: sew.block(config)["matcher"][
            "judge_max_new_tokens"
        ],
    script:
        "../scripts/side_effects/judge_requests.py"


rule side_effects_match:
    input:
        unpack(lambda wc: sew.match_inputs(config, wc.model)),
    output:
        f"{SE}/matches/{{model}}.jsonl",
    log:
        "logs/side_effects/match/{model}.log",
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
        parsed=f"{SE}/parsed/{{model}}.jsonl",
        matches=f"{SE}/matches/{{model}}.jsonl",
        reference=f"{SE}/prepared/reference.tsv",
    output:
        scores=f"{SE}/scores/{{model}}.tsv",
        overlap=f"{SE}/overlap/{{model}}.tsv",
    log:
        "logs/side_effects/score/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/side_effects/score.py"


rule side_effects_tables:
    input:
        scores=lambda wc: expand(
            f"{SE}/scores/{{model}}.tsv", model=evaluated_models("side_effects")
        ),
        overlaps=lambda wc: expand(
            f"{SE}/overlap/{{model}}.tsv", model=evaluated_models("side_effects")
        ),
    output:
        tables=sew.table_paths("tsv"),
        markdown=sew.table_paths("md"),
        figures=sew.figure_paths(),
    log:
        "logs/side_effects/tables.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: evaluated_models("side_effects"),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/tables.py"


rule side_effects_validation_requests:
    input:
        validation=SE_BLOCK.get("validation", []),
        template=f"{sew.PROMPTS}/match_llm.txt",
    output:
        f"{SE}/requests/validation.jsonl",
    log:
        "logs/side_effects/validation_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        judge_max_new_tokens=lambda wc: sew.block(config)["matcher"][
            "judge_max_new_tokens"
        ],
    script:
        "../scripts/side_effects/validation_requests.py"


rule side_effects_matcher_validation:
    input:
        unpack(lambda wc: sew.validation_inputs(config)),
    output:
        table=f"{SE}/tables/matcher_agreement.tsv",
        markdown=f"{SE}/tables/matcher_agreement.md",
        judge_agreement=f"{SE}/tables/judge_agreement.tsv",
        judge_agreement_md=f"{SE}/tables/judge_agreement.md",
        judge_confusion=f"{SE}/tables/judge_confusion.tsv",
        judge_confusion_md=f"{SE}/tables/judge_confusion.md",
        judge_per_class=f"{SE}/tables/judge_per_class.tsv",
        judge_per_class_md=f"{SE}/tables/judge_per_class.md",
    log:
        "logs/side_effects/matcher_validation.log",
    benchmark:
        "benchmarks/side_effects/matcher_validation.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        methods=lambda wc: sew.validation_methods(config),
        matcher=lambda wc: sew.block(config)["matcher"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/side_effects/matcher_validation.py"


STUDY_TARGETS["side_effects"] = lambda: sew.final_targets(
    evaluated_models("side_effects")
)
