# Paired model comparisons and the leaderboard of every enabled study (oncoeval.stats.compare): one
# generic rule; each study's workflow.py says how to read its per-unit values (unit_scores) and
# which other files that needs (comparison_inputs).


rule compare_models:
    input:
        unpack(lambda wc: run_wf.comparison_inputs(config, wc.study)),
    output:
        comparison=ANY_STUDY.table(layout.MODEL_COMPARISON),
        comparison_md=ANY_STUDY.table(layout.MODEL_COMPARISON, "md"),
        leaderboard=ANY_STUDY.table(layout.LEADERBOARD),
        leaderboard_md=ANY_STUDY.table(layout.LEADERBOARD, "md"),
    log:
        "logs/{study}/compare_models.log",
    localrule: True
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.evaluated_models(config, wc.study),
        comparisons=config.get("comparisons", {}),
        bootstrap=config["bootstrap"],
        judge_correction=config.get("judge_correction", {}),
        study=lambda wc: run_wf.comparison_params(config, wc.study),
    script:
        "../scripts/compare_models.py"
