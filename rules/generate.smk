# The one rule that calls a model. Every LLM call of the workflow goes through it: evaluated
# models and judges alike. Its params hold only what the responses depend on (the model's
# signature), so editing another model, or an operational setting of this one, reruns nothing.


import functools
import re

from oncoeval import backends
from oncoeval.backends import weights

# One scheduler resource of a `generate` job (oncoeval.workflow.dag.generate_resource) for this run.
generate_resource = functools.partial(run_wf.generate_resource, config, workflow)


rule generate:
    input:
        requests=ANY_STUDY.requests("{requestset}"),
        # What the model's backend needs first (an hf GGUF's conversion); ancient(): a
        # re-written manifest reruns nothing.
        checkpoint=lambda wc: ancient(
            backends.extra_inputs(run_wf.routed_model_cfg(config, wc, GENERATE_ROUTES))
        ),
    output:
        responses=ANY_STUDY.responses("{model}", "{requestset}"),
    log:
        "logs/{study}/generate/{model}/{requestset}.log",
    benchmark:
        "benchmarks/{study}/generate/{model}/{requestset}.tsv"
    conda:
        "../envs/inference.yaml"
    threads: lambda wc: oc.generate_threads(run_wf.model_cfg(config, wc.model))
    resources:
        # Portable needs from the model's backend (its job_resources, oncoeval.backends):
        # hf/vllm models ask for gpu/mem_mb/runtime and, when given, the SLURM plugin's
        # gpu_model (--gpus=MODEL:N), constraint (-C), slurm_partition (-p) and slurm_extra;
        # API models ask for one `api_calls` slot and no GPU; replay asks for nothing special.
        # Unset keys are None, which Snakemake treats as "not requested".
        gpu=lambda wc: generate_resource(wc, "gpu", 0),
        mem_mb=lambda wc: generate_resource(wc, "mem_mb"),
        runtime=lambda wc: generate_resource(wc, "runtime"),
        api_calls=lambda wc: generate_resource(wc, "api_calls", 0),
        gpu_model=lambda wc: generate_resource(wc, "gpu_model"),
        constraint=lambda wc: generate_resource(wc, "constraint"),
        slurm_partition=lambda wc: generate_resource(wc, "slurm_partition"),
        slurm_extra=lambda wc: generate_resource(wc, "slurm_extra"),
    params:
        # (for replay models also a digest of the answers file this job reads)
        model=lambda wc: oc.model_signature(
            run_wf.model_cfg(config, wc.model), wc.study, wc.requestset
        ),
    script:
        "../scripts/generate.py"


# Each local model's weights (hf, vllm), resolved and checked once where Snakemake runs (a
# cluster's login node: compute nodes are often offline) before any of its jobs: path, hub
# revision, sha256 of the weights, tokenizer and chat template, which results/provenance.json
# carries. A missing file or one that differs from the pinned revision fails the run here,
# before any GPU job (oncoeval.backends.weights). `on_disk` (a stat per file) reruns it when a file changes.
rule stage_weights:
    output:
        layout.weights_record("{model}"),
    log:
        "logs/stage_weights/{model}.log",
    localrule: True
    conda:
        "../envs/cpu.yaml"
    params:
        model=lambda wc: weights.staging_keys(run_wf.model_cfg(config, wc.model)),
        on_disk=lambda wc: weights.fingerprint(run_wf.model_cfg(config, wc.model)),
    script:
        "../scripts/stage_weights.py"


# One-time conversions the backends ask for (oncoeval.backends.conversions). GGUF weights (the
# embedded SmolLM2) load slowly through transformers (25-30 s a job): hf converts them once to a
# regular checkpoint in the model store (`model_store`), keyed by the GGUF's sha256 and the
# transformers version, and shared by every run that points at that store. The rule's output is
# a small manifest in this run's tree; a job finds an existing conversion and only writes the
# manifest, so it never deletes a checkpoint other runs may be reading.
CONVERSIONS = backends.conversions(run_wf.used_model_cfgs(config))


rule convert_model:
    input:
        gguf=lambda wc: CONVERSIONS[wc.checkpoint],
    output:
        manifest=layout.checkpoint_manifest("{checkpoint}"),
    log:
        "logs/convert_model/{checkpoint}.log",
    wildcard_constraints:
        checkpoint="|".join(re.escape(name) for name in CONVERSIONS) or "NO_CONVERSIONS",
    conda:
        "../envs/inference.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/convert_model.py"


# Per study: requests, failed calls and truncated answers per model and request set, read from
# every responses file of the study once the study's own tables are built.
rule model_calls_table:
    input:
        lambda wc: run_wf.study_targets(config, wc.study),
    output:
        tsv=ANY_STUDY.table(layout.MODEL_CALLS),
        md=ANY_STUDY.table(layout.MODEL_CALLS, "md"),
    log:
        "logs/{study}/model_calls_table.log",
    localrule: True
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: run_wf.models_called_in(config, wc.study),
    script:
        "../scripts/model_calls_table.py"
