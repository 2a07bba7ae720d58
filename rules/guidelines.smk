# The guidelines study (CancerGUIDE): path prediction through a guideline decision tree with k
# rollouts, expert-label metrics, self- and cross-model consistency, six proxy benchmarks and
# their agreement with experts, the meta-classifier, clustering and error analysis.
# Logic: oncoeval/studies/guidelines/ (workflow.py: paths, outputs, targets); entry points:
# scripts/guidelines/.

from oncoeval.studies.guidelines import workflow as guidelines_wf

GUIDELINES = oc.study_block(config, "guidelines")  # validated and filled by common.smk


localrules:
    guidelines_prepare,
    guidelines_requests,
    guidelines_parse,
    guidelines_score,
    guidelines_synth_targets,
    guidelines_synth_record_check_requests,
    guidelines_synth_structured_requests,
    guidelines_synth_collect,
    guidelines_synth_choose_requests,
    guidelines_synth_benchmark,
    guidelines_chooser_validation,
    guidelines_proxy_scores,
    guidelines_aggregate,


rule guidelines_prepare:
    input:
        tree=GUIDELINES["guideline"] or [],
        labelled=GUIDELINES["labelled_notes"] or [],
        unlabelled=guidelines_wf.optional_inputs(GUIDELINES["unlabelled_notes"]),
    output:
        **guidelines_wf.OUTPUTS_PREPARE,
    log:
        guidelines_wf.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GUIDELINES["trim_surveillance"],
        limit=ITEM_LIMIT,
        primary_annotator=GUIDELINES["primary_annotator"],
    script:
        "../scripts/guidelines/prepare.py"


rule guidelines_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_prepare.output.notes,
        template=guidelines_wf.template(GUIDELINES, "predict"),
    output:
        **guidelines_wf.OUTPUTS_REQUESTS,
    log:
        guidelines_wf.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        rollouts=GUIDELINES["rollouts"],
    script:
        "../scripts/guidelines/requests.py"


rule guidelines_parse:
    input:
        tree=rules.guidelines_prepare.output.tree,
        responses=guidelines_wf.paths.responses("{model}", "rollouts"),
    output:
        **guidelines_wf.OUTPUTS_PARSE,
    log:
        guidelines_wf.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GUIDELINES["trim_surveillance"],
    script:
        "../scripts/guidelines/parse.py"


rule guidelines_score:
    input:
        notes=rules.guidelines_prepare.output.notes,
        rollouts=rules.guidelines_parse.output.rollouts,
    output:
        **guidelines_wf.OUTPUTS_SCORE,
    log:
        guidelines_wf.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/guidelines/score.py"


# ---- synthetic supervision: generator writes notes, predicts their paths; chooser filters


rule guidelines_synth_targets:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=guidelines_wf.optional_inputs(GUIDELINES["synthetic"]["example_notes"]),
        record=guidelines_wf.template(GUIDELINES, "record"),
        unstructured=guidelines_wf.template(GUIDELINES, "unstructured_note"),
    output:
        targets=guidelines_wf.paths("synthetic", "targets.jsonl"),
        records=guidelines_wf.paths.requests("synth_record"),
        unstructured=guidelines_wf.paths.requests("synth_note_unstructured"),
    log:
        guidelines_wf.paths.log("synth_targets"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GUIDELINES["synthetic"],
    script:
        "../scripts/guidelines/synth_targets.py"


rule guidelines_synth_record_check_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        records=guidelines_wf.judge_responses(GUIDELINES, "generator", "synth_record"),
        template=guidelines_wf.template(GUIDELINES, "record_predict"),
    output:
        guidelines_wf.paths.requests("synth_record_predict"),
    log:
        guidelines_wf.paths.log("synth_record_check_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GUIDELINES["synthetic"],
    script:
        "../scripts/guidelines/synth_record_check_requests.py"


rule guidelines_synth_structured_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=guidelines_wf.optional_inputs(GUIDELINES["synthetic"]["example_notes"]),
        targets=rules.guidelines_synth_targets.output.targets,
        records=guidelines_wf.judge_responses(GUIDELINES, "generator", "synth_record"),
        record_predict=guidelines_wf.judge_responses(
            GUIDELINES, "generator", "synth_record_predict"
        ),
        template=guidelines_wf.template(GUIDELINES, "structured_note"),
    output:
        requests=guidelines_wf.paths.requests("synth_note_structured"),
        check=guidelines_wf.paths("synthetic", "record_check.jsonl"),
    log:
        guidelines_wf.paths.log("synth_structured_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GUIDELINES["synthetic"],
        trim=GUIDELINES["trim_surveillance"],
    script:
        "../scripts/guidelines/synth_structured_requests.py"


rule guidelines_synth_collect:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        notes=guidelines_wf.judge_responses(
            GUIDELINES, "generator", "synth_note_structured", "synth_note_unstructured"
        ),
        check=rules.guidelines_synth_structured_requests.output.check,
        template=guidelines_wf.template(GUIDELINES, "predict"),
    output:
        notes=guidelines_wf.paths("synthetic", "notes.jsonl"),
        predict=guidelines_wf.paths.requests("synth_predict"),
    log:
        guidelines_wf.paths.log("synth_collect"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GUIDELINES["synthetic"],
    script:
        "../scripts/guidelines/synth_collect.py"


rule guidelines_synth_choose_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=guidelines_wf.judge_responses(GUIDELINES, "generator", "synth_predict"),
        template=guidelines_wf.template(GUIDELINES, "choose"),
    output:
        guidelines_wf.paths.requests("synth_choose"),
    log:
        guidelines_wf.paths.log("synth_choose_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GUIDELINES["trim_surveillance"],
        synth=GUIDELINES["synthetic"],
    script:
        "../scripts/guidelines/synth_choose_requests.py"


rule guidelines_synth_benchmark:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=guidelines_wf.judge_responses(GUIDELINES, "generator", "synth_predict"),
        choose=guidelines_wf.judge_responses(GUIDELINES, "chooser", "synth_choose"),
    output:
        **guidelines_wf.OUTPUTS_SYNTH_BENCHMARK,
    log:
        guidelines_wf.paths.log("synth_benchmark"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GUIDELINES["trim_surveillance"],
        synth=GUIDELINES["synthetic"],
    script:
        "../scripts/guidelines/synth_benchmark.py"


rule guidelines_chooser_validation:
    input:
        benchmark=guidelines_wf.OUTPUTS_SYNTH_BENCHMARK["benchmark"],
        labels=GUIDELINES["chooser_validation"] or [],
    output:
        **guidelines_wf.OUTPUTS_CHOOSER_VALIDATION,
    log:
        guidelines_wf.paths.log("chooser_validation"),
    conda:
        "../envs/cpu.yaml"
    params:
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/chooser_validation.py"


# ---- proxies of one model, then everything across models


rule guidelines_proxy_scores:
    input:
        unpack(guidelines_wf.proxy_inputs(GUIDELINES)),
    output:
        **guidelines_wf.OUTPUTS_PROXY,
    log:
        guidelines_wf.paths.log("proxy", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GUIDELINES["trim_surveillance"],
        delta=GUIDELINES["consistency"]["delta"],
        pool=GUIDELINES["consistency"]["pool"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/proxy_scores.py"


rule guidelines_aggregate:
    input:
        notes=rules.guidelines_prepare.output.notes,
        scores=guidelines_wf.per_model(config, guidelines_wf.OUTPUTS_SCORE["scores"]),
        rollouts=guidelines_wf.per_model(
            config, guidelines_wf.OUTPUTS_PARSE["rollouts"]
        ),
        proxy=guidelines_wf.per_model(config, guidelines_wf.OUTPUTS_PROXY["proxy"]),
    output:
        **guidelines_wf.aggregate_outputs(GUIDELINES),
    log:
        guidelines_wf.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=guidelines_wf.models(config),
        settings=guidelines_wf.aggregate_settings(GUIDELINES),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/aggregate.py"
