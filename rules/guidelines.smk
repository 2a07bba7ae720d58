# The guidelines study (CancerGUIDE): path prediction through a guideline decision tree with k
# rollouts, expert-label metrics, self- and cross-model consistency, six proxy benchmarks and
# their agreement with experts, the meta-classifier, clustering and error analysis.
# Logic: oncoeval/studies/guidelines/ (workflow.py: paths, outputs, targets); entry points:
# scripts/guidelines/.

from oncoeval.studies.guidelines import workflow as glw

GL = config["studies"]["guidelines"]  # validated and filled by common.smk


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
    guidelines_proxy_scores,
    guidelines_aggregate,


rule guidelines_prepare:
    input:
        tree=GL["guideline"] or [],
        labelled=GL["labelled_notes"] or [],
        unlabelled=glw.optional_inputs(GL["unlabelled_notes"]),
    output:
        **glw.OUTPUTS_PREPARE,
    log:
        glw.paths.log("prepare"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        limit=ITEM_LIMIT,
        primary_annotator=GL["primary_annotator"],
    script:
        "../scripts/guidelines/prepare.py"


rule guidelines_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_prepare.output.notes,
        template=GL["prompts"]["predict"],
    output:
        **glw.OUTPUTS_REQUESTS,
    log:
        glw.paths.log("requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        rollouts=GL["rollouts"],
    script:
        "../scripts/guidelines/requests.py"


rule guidelines_parse:
    input:
        tree=rules.guidelines_prepare.output.tree,
        responses=glw.paths.responses("{model}", "rollouts"),
    output:
        **glw.OUTPUTS_PARSE,
    log:
        glw.paths.log("parse", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
    script:
        "../scripts/guidelines/parse.py"


rule guidelines_score:
    input:
        notes=rules.guidelines_prepare.output.notes,
        rollouts=rules.guidelines_parse.output.rollouts,
    output:
        **glw.OUTPUTS_SCORE,
    log:
        glw.paths.log("score", "{model}"),
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/guidelines/score.py"


# ---- synthetic supervision: generator writes notes, predicts their paths; chooser filters


rule guidelines_synth_targets:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=glw.optional_inputs(GL["synthetic"]["example_notes"]),
        record=GL["prompts"]["record"],
        unstructured=GL["prompts"]["unstructured_note"],
    output:
        targets=glw.paths("synthetic", "targets.jsonl"),
        records=glw.paths.requests("synth_record"),
        unstructured=glw.paths.requests("synth_note_unstructured"),
    log:
        glw.paths.log("synth_targets"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GL["synthetic"],
    script:
        "../scripts/guidelines/synth_targets.py"


rule guidelines_synth_record_check_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        records=glw.judge_responses(config, "generator", "synth_record"),
        template=GL["prompts"]["record_predict"],
    output:
        glw.paths.requests("synth_record_predict"),
    log:
        glw.paths.log("synth_record_check_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GL["synthetic"],
    script:
        "../scripts/guidelines/synth_record_check_requests.py"


rule guidelines_synth_structured_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=glw.optional_inputs(GL["synthetic"]["example_notes"]),
        targets=rules.guidelines_synth_targets.output.targets,
        records=glw.judge_responses(config, "generator", "synth_record"),
        record_predict=glw.judge_responses(config, "generator", "synth_record_predict"),
        template=GL["prompts"]["structured_note"],
    output:
        requests=glw.paths.requests("synth_note_structured"),
        check=glw.paths("synthetic", "record_check.jsonl"),
    log:
        glw.paths.log("synth_structured_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GL["synthetic"],
        trim=GL["trim_surveillance"],
    script:
        "../scripts/guidelines/synth_structured_requests.py"


rule guidelines_synth_collect:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        notes=glw.judge_responses(
            config, "generator", "synth_note_structured", "synth_note_unstructured"
        ),
        check=rules.guidelines_synth_structured_requests.output.check,
        template=GL["prompts"]["predict"],
    output:
        notes=glw.paths("synthetic", "notes.jsonl"),
        predict=glw.paths.requests("synth_predict"),
    log:
        glw.paths.log("synth_collect"),
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GL["synthetic"],
    script:
        "../scripts/guidelines/synth_collect.py"


rule guidelines_synth_choose_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=glw.judge_responses(config, "generator", "synth_predict"),
        template=GL["prompts"]["choose"],
    output:
        glw.paths.requests("synth_choose"),
    log:
        glw.paths.log("synth_choose_requests"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        synth=GL["synthetic"],
    script:
        "../scripts/guidelines/synth_choose_requests.py"


rule guidelines_synth_benchmark:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=glw.judge_responses(config, "generator", "synth_predict"),
        choose=glw.judge_responses(config, "chooser", "synth_choose"),
    output:
        **glw.OUTPUTS_SYNTH_BENCHMARK,
    log:
        glw.paths.log("synth_benchmark"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        synth=GL["synthetic"],
    script:
        "../scripts/guidelines/synth_benchmark.py"


# ---- proxies of one model, then everything across models


rule guidelines_proxy_scores:
    input:
        unpack(glw.proxy_inputs(config)),
    output:
        **glw.OUTPUTS_PROXY,
    log:
        glw.paths.log("proxy", "{model}"),
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        delta=GL["consistency"]["delta"],
        pool=GL["consistency"]["pool"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/proxy_scores.py"


rule guidelines_aggregate:
    input:
        notes=rules.guidelines_prepare.output.notes,
        scores=glw.per_model(config, glw.OUTPUTS_SCORE["scores"]),
        rollouts=glw.per_model(config, glw.OUTPUTS_PARSE["rollouts"]),
        proxy=glw.per_model(config, glw.OUTPUTS_PROXY["proxy"]),
    output:
        **glw.aggregate_outputs(GL),
    log:
        glw.paths.log("aggregate"),
    conda:
        "../envs/cpu.yaml"
    params:
        models=glw.models(config),
        settings=glw.aggregate_settings(GL),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/aggregate.py"


STUDY_TARGETS["guidelines"] = lambda: glw.final_targets(config)
