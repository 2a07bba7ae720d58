# The exposure audit (opt-in per study, `exposure.enabled`): probe request sets built from a
# study's prepared items, answered by each evaluated model through the one `generate` rule
# (cached, priced, PHI-routed like every request set), scored per item against perturbed
# controls, and summed up per model and probe. Logic: oncoeval/exposure/.

from oncoeval.workflow import exposure as exposure_wf

EXPOSURE_STUDIES = "|".join(exposure_wf.auditable_studies()) or "NO_STUDIES"


localrules:
    exposure_requests,
    exposure_score,
    exposure_table,


rule exposure_requests:
    input:
        prepared=lambda wc: exposure_wf.source(wc.study).items,
        template=f"{exposure_wf.PROMPTS}/{{probe}}.txt",
    output:
        exposure_wf.requests("{study}", "{probe}"),
    log:
        "logs/{study}/exposure/requests_{probe}.log",
    wildcard_constraints:
        study=EXPOSURE_STUDIES,
        probe="completion|slot|likelihood",
    conda:
        "../envs/cpu.yaml"
    params:
        settings=lambda wc: exposure_wf.probe_params(config, wc.study),
    script:
        "../scripts/exposure/requests.py"


rule exposure_score:
    input:
        unpack(lambda wc: exposure_wf.score_inputs(config, wc.study, wc.model)),
    output:
        exposure_wf.item_table("{study}", "{model}"),
    log:
        "logs/{study}/exposure/score_{model}.log",
    wildcard_constraints:
        study=EXPOSURE_STUDIES,
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/exposure/score.py"


rule exposure_table:
    input:
        lambda wc: exposure_wf.table_inputs(config, wc.study),
    output:
        tsv=ANY_STUDY.table("exposure"),
        md=ANY_STUDY.table("exposure", "md"),
        figure=ANY_STUDY.figure("exposure"),
    log:
        "logs/{study}/exposure/table.log",
    wildcard_constraints:
        study=EXPOSURE_STUDIES,
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.evaluated_models(config, wc.study),
        probes=lambda wc: exposure_wf.block(config, wc.study)["probes"],
        not_run=lambda wc: exposure_wf.table_not_run(config, wc.study),
    script:
        "../scripts/exposure/table.py"
