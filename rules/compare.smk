# Paired model comparisons and the leaderboard of every enabled study (oncoeval.compare): one
# generic rule; each study's workflow.py says how to read its per-unit values (unit_scores) and
# which other files that needs (comparison_inputs).


import importlib


def study_workflow(study):
    return importlib.import_module(f"oncoeval.studies.{study}.workflow")


def comparison_inputs(wildcards):
    workflow = study_workflow(wildcards.study)
    scores = [workflow.paths.scores(m) for m in evaluated_models(wildcards.study)]
    return {"scores": scores, **workflow.comparison_inputs(config)}


def comparison_params(study):
    """What a study's comparison depends on beside its inputs (its comparison_params, if any)."""
    own = getattr(study_workflow(study), "comparison_params", None)
    return own(config) if own else {}


rule compare_models:
    input:
        unpack(comparison_inputs),
    output:
        comparison="results/{study}/tables/model_comparison.tsv",
        comparison_md="results/{study}/tables/model_comparison.md",
        leaderboard="results/{study}/tables/leaderboard.tsv",
        leaderboard_md="results/{study}/tables/leaderboard.md",
    log:
        "logs/{study}/compare_models.log",
    localrule: True
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: evaluated_models(wc.study),
        comparisons=config.get("comparisons", {}),
        bootstrap=config["bootstrap"],
        judge_correction=config.get("judge_correction", {}),
        study=lambda wc: comparison_params(wc.study),
    script:
        "../scripts/compare_models.py"
