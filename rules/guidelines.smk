# The guidelines study (CancerGUIDE): path prediction through a guideline decision tree with k
# rollouts, expert-label metrics, self- and cross-model consistency, six proxy benchmarks and
# their agreement with experts, the meta-classifier, clustering and error analysis.
# Logic: oncoeval/studies/guidelines/; entry points: scripts/guidelines/.

from pathlib import Path

from oncoeval.studies.guidelines import rules_support as GLS

GL = GLS.settings(
    config, Path(workflow.basedir) / "config/schemas/guidelines.schema.yaml"
)
GLR = "results/guidelines"


localrules:
    guidelines_prepare,
    guidelines_rollout_requests,
    guidelines_parse,
    guidelines_score,
    guidelines_synth_targets,
    guidelines_synth_record_check_requests,
    guidelines_synth_structured_requests,
    guidelines_synth_collect,
    guidelines_synth_choose_requests,
    guidelines_synth_benchmark,
    guidelines_proxy_scores,
    guidelines_cross_model,
    guidelines_table1,
    guidelines_consistency_accuracy,
    guidelines_proxy_agreement,
    guidelines_meta_classifier,
    guidelines_clustering,
    guidelines_error_analysis,


rule guidelines_prepare:
    input:
        tree=GL["guideline"] or [],
        labelled=GL["labelled_notes"] or [],
        unlabelled=GLS.optional_inputs(GL["unlabelled_notes"]),
    output:
        tree=f"{GLR}/prepared/tree.json",
        notes=f"{GLR}/prepared/notes.jsonl",
        excluded=f"{GLR}/prepared/excluded_labels.tsv",
        summary=f"{GLR}/tables/guideline_tree.tsv",
        summary_md=f"{GLR}/tables/guideline_tree.md",
    log:
        "logs/guidelines/prepare.log",
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        limit=ITEM_LIMIT,
        primary_annotator=GL["primary_annotator"],
    script:
        "../scripts/guidelines/prepare.py"


rule guidelines_rollout_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_prepare.output.notes,
        template=GLS.prompt(GL, "predict"),
    output:
        f"{GLR}/requests/rollouts.jsonl",
    log:
        "logs/guidelines/rollout_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        rollouts=GLS.rollout_settings(GL),
    script:
        "../scripts/guidelines/rollout_requests.py"


rule guidelines_parse:
    input:
        tree=rules.guidelines_prepare.output.tree,
        responses=f"{GLR}/responses/{{model}}/rollouts.jsonl",
    output:
        f"{GLR}/rollouts/{{model}}.tsv",
    log:
        "logs/guidelines/parse/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
    script:
        "../scripts/guidelines/parse.py"


rule guidelines_score:
    input:
        notes=rules.guidelines_prepare.output.notes,
        rollouts=f"{GLR}/rollouts/{{model}}.tsv",
    output:
        f"{GLR}/scores/{{model}}.tsv",
    log:
        "logs/guidelines/score/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/guidelines/score.py"


# ---- synthetic supervision: generator writes notes, predicts their paths; chooser filters


rule guidelines_synth_targets:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=GLS.optional_inputs(GLS.synthetic_settings(GL)["example_notes"]),
        record=GLS.prompt(GL, "record"),
        unstructured=GLS.prompt(GL, "unstructured_note"),
    output:
        targets=f"{GLR}/synthetic/targets.jsonl",
        records=f"{GLR}/requests/synth_record.jsonl",
        unstructured=f"{GLR}/requests/synth_note_unstructured.jsonl",
    log:
        "logs/guidelines/synth_targets.log",
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GLS.synthetic_settings(GL),
    script:
        "../scripts/guidelines/synth_targets.py"


rule guidelines_synth_record_check_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        records=GLS.judge_responses(config, "generator", "synth_record"),
        template=GLS.prompt(GL, "record_predict"),
    output:
        f"{GLR}/requests/synth_record_predict.jsonl",
    log:
        "logs/guidelines/synth_record_check_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GLS.synthetic_settings(GL),
    script:
        "../scripts/guidelines/synth_record_check_requests.py"


rule guidelines_synth_structured_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        examples=GLS.optional_inputs(GLS.synthetic_settings(GL)["example_notes"]),
        targets=rules.guidelines_synth_targets.output.targets,
        records=GLS.judge_responses(config, "generator", "synth_record"),
        record_predict=GLS.judge_responses(config, "generator", "synth_record_predict"),
        template=GLS.prompt(GL, "structured_note"),
    output:
        requests=f"{GLR}/requests/synth_note_structured.jsonl",
        check=f"{GLR}/synthetic/record_check.jsonl",
    log:
        "logs/guidelines/synth_structured_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GLS.synthetic_settings(GL),
        trim=GL["trim_surveillance"],
    script:
        "../scripts/guidelines/synth_structured_requests.py"


rule guidelines_synth_collect:
    input:
        tree=rules.guidelines_prepare.output.tree,
        targets=rules.guidelines_synth_targets.output.targets,
        notes=GLS.judge_responses(
            config, "generator", "synth_note_structured", "synth_note_unstructured"
        ),
        check=rules.guidelines_synth_structured_requests.output.check,
        template=GLS.prompt(GL, "predict"),
    output:
        notes=f"{GLR}/synthetic/notes.jsonl",
        predict=f"{GLR}/requests/synth_predict.jsonl",
    log:
        "logs/guidelines/synth_collect.log",
    conda:
        "../envs/cpu.yaml"
    params:
        synth=GLS.synthetic_settings(GL),
    script:
        "../scripts/guidelines/synth_collect.py"


rule guidelines_synth_choose_requests:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=GLS.judge_responses(config, "generator", "synth_predict"),
        template=GLS.prompt(GL, "choose"),
    output:
        f"{GLR}/requests/synth_choose.jsonl",
    log:
        "logs/guidelines/synth_choose_requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        synth=GLS.synthetic_settings(GL),
    script:
        "../scripts/guidelines/synth_choose_requests.py"


rule guidelines_synth_benchmark:
    input:
        tree=rules.guidelines_prepare.output.tree,
        notes=rules.guidelines_synth_collect.output.notes,
        predict=GLS.judge_responses(config, "generator", "synth_predict"),
        choose=GLS.judge_responses(config, "chooser", "synth_choose"),
    output:
        table=f"{GLR}/synthetic/benchmark.tsv",
        table_md=f"{GLR}/synthetic/benchmark.md",
    log:
        "logs/guidelines/synth_benchmark.log",
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        synth=GLS.synthetic_settings(GL),
    script:
        "../scripts/guidelines/synth_benchmark.py"


# ---- proxies, per model and across models


rule guidelines_proxy_scores:
    input:
        unpack(GLS.proxy_inputs(config, GLR)),
    output:
        f"{GLR}/proxy/{{model}}.tsv",
    log:
        "logs/guidelines/proxy/{model}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        trim=GL["trim_surveillance"],
        delta=GLS.consistency_settings(GL)["delta"],
        pool=GLS.consistency_settings(GL)["pool"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/proxy_scores.py"


rule guidelines_cross_model:
    input:
        scores=GLS.per_model(config, f"{GLR}/scores/{{model}}.tsv"),
        rollouts=GLS.per_model(config, f"{GLR}/rollouts/{{model}}.tsv"),
    output:
        labels=f"{GLR}/cross_model/labels.tsv",
        features=f"{GLR}/cross_model/features.tsv",
        scores=f"{GLR}/cross_model/proxy_scores.tsv",
    log:
        "logs/guidelines/cross_model.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=GLS.models(config),
        consistency=GLS.consistency_settings(GL),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/cross_model.py"


rule guidelines_table1:
    input:
        notes=rules.guidelines_prepare.output.notes,
        scores=GLS.per_model(config, f"{GLR}/scores/{{model}}.tsv"),
        rollouts=GLS.per_model(config, f"{GLR}/rollouts/{{model}}.tsv"),
    output:
        table=f"{GLR}/tables/table1_expert.tsv",
        table_md=f"{GLR}/tables/table1_expert.md",
        annotators=f"{GLR}/tables/annotators.tsv",
        annotators_md=f"{GLR}/tables/annotators.md",
    log:
        "logs/guidelines/table1.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=GLS.models(config),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/table1.py"


rule guidelines_consistency_accuracy:
    input:
        scores=GLS.per_model(config, f"{GLR}/scores/{{model}}.tsv"),
    output:
        table=f"{GLR}/tables/consistency_accuracy.tsv",
        table_md=f"{GLR}/tables/consistency_accuracy.md",
        bins=f"{GLR}/tables/accuracy_by_consistency.tsv",
        bins_md=f"{GLR}/tables/accuracy_by_consistency.md",
        figure=f"{GLR}/figures/accuracy_by_consistency.png",
    log:
        "logs/guidelines/consistency_accuracy.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=GLS.models(config),
        bins=GL["accuracy_bins"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/consistency_accuracy.py"


rule guidelines_proxy_agreement:
    input:
        proxy=GLS.per_model(config, f"{GLR}/proxy/{{model}}.tsv"),
        cross=rules.guidelines_cross_model.output.scores,
        table1=rules.guidelines_table1.output.table,
    output:
        scores=f"{GLR}/tables/proxy_scores.tsv",
        scores_md=f"{GLR}/tables/proxy_scores.md",
        agreement=f"{GLR}/tables/proxy_agreement.tsv",
        agreement_md=f"{GLR}/tables/proxy_agreement.md",
        compliance=f"{GLR}/tables/compliance.tsv",
        compliance_md=f"{GLR}/tables/compliance.md",
        heatmap=f"{GLR}/figures/proxy_heatmap.png",
    log:
        "logs/guidelines/proxy_agreement.log",
    conda:
        "../envs/cpu.yaml"
    params:
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/proxy_agreement.py"


rule guidelines_meta_classifier:
    input:
        scores=GLS.per_model(config, f"{GLR}/scores/{{model}}.tsv"),
        features=rules.guidelines_cross_model.output.features,
        proxy=rules.guidelines_proxy_agreement.output.scores,
    output:
        table=f"{GLR}/tables/meta_classifier.tsv",
        table_md=f"{GLR}/tables/meta_classifier.md",
        predictions=f"{GLR}/meta_classifier/predictions.tsv",
        rows=f"{GLR}/meta_classifier/rows.tsv",
        roc_sets=f"{GLR}/figures/roc_feature_sets.png",
        roc=expand(
            f"{GLR}/figures/roc_{{feature_set}}.png",
            feature_set=GLS.feature_sets(GL),
        ),
    log:
        "logs/guidelines/meta_classifier.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=GLS.models(config),
        meta=GL["meta_classifier"],
        feature_sets=GLS.feature_sets(GL),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/meta_classifier.py"


rule guidelines_clustering:
    input:
        rows=rules.guidelines_meta_classifier.output.rows,
    output:
        table=f"{GLR}/tables/clustering.tsv",
        table_md=f"{GLR}/tables/clustering.md",
    log:
        "logs/guidelines/clustering.log",
    conda:
        "../envs/cpu.yaml"
    params:
        seed=GL["meta_classifier"]["seed"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/clustering.py"


rule guidelines_error_analysis:
    input:
        scores=GLS.per_model(config, f"{GLR}/scores/{{model}}.tsv"),
        rollouts=GLS.per_model(config, f"{GLR}/rollouts/{{model}}.tsv"),
    output:
        table=f"{GLR}/tables/error_analysis.tsv",
        table_md=f"{GLR}/tables/error_analysis.md",
        points=f"{GLR}/error_analysis/divergence_points.tsv",
        pairs=f"{GLR}/error_analysis/divergence_pairs.tsv",
        pair_agreement=f"{GLR}/tables/divergence_agreement.tsv",
        pair_agreement_md=f"{GLR}/tables/divergence_agreement.md",
        pair_figure=f"{GLR}/figures/divergence_pairs.png",
    log:
        "logs/guidelines/error_analysis.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=GLS.models(config),
        top_n=GL["error_top_n"],
        gamma=GL["error_gamma"],
        bootstrap=config["bootstrap"],
    script:
        "../scripts/guidelines/error_analysis.py"


STUDY_TARGETS["guidelines"] = lambda: GLS.final_targets(config, GLR)
