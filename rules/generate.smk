# The one rule that calls a model. Every LLM call of the workflow goes through it: evaluated
# models and judges alike. Its params hold only what the responses depend on (the model's
# signature), so editing another model, or an operational setting of this one, reruns nothing.


import re

from oncoeval.backends import hf as hf_backend


rule generate:
    input:
        requests="results/{study}/requests/{requestset}.jsonl",
        # Waits for the model's GGUF conversion (if any); ancient(): a re-written manifest
        # reruns nothing.
        checkpoint=lambda wc: ancient(
            hf_backend.conversion_manifests(model_cfg(wc.model))
        ),
    output:
        responses="results/{study}/responses/{model}/{requestset}.jsonl",
    log:
        "logs/{study}/generate/{model}/{requestset}.log",
    benchmark:
        "benchmarks/{study}/generate/{model}/{requestset}.tsv"
    conda:
        "../envs/inference.yaml"
    threads: lambda wc: oc.generate_threads(model_cfg(wc.model))
    resources:
        gpu=lambda wc: oc.generate_resources(model_cfg(wc.model)).get("gpu", 0),
        mem_mb=lambda wc: oc.generate_resources(model_cfg(wc.model))["mem_mb"],
        runtime=lambda wc: oc.generate_resources(model_cfg(wc.model))["runtime"],
        api_calls=lambda wc: oc.generate_resources(model_cfg(wc.model)).get(
            "api_calls", 0
        ),
    params:
        model=lambda wc: oc.model_signature(model_cfg(wc.model)),
    script:
        "../scripts/generate.py"


# GGUF weights (the embedded SmolLM2) load slowly through transformers (25-30 s a job): convert
# them once to a regular checkpoint in the model store (`model_store`), keyed by the GGUF's
# sha256 and the transformers version, and shared by every run that points at that store. The
# rule's output is a small manifest in this run's tree; a job finds an existing conversion and
# only writes the manifest, so it never deletes a checkpoint other runs may be reading.
CONVERSIONS = hf_backend.conversions({m: model_cfg(m) for m in oc.used_models(config)})


rule convert_model:
    input:
        gguf=lambda wc: CONVERSIONS[wc.checkpoint],
    output:
        manifest="results/models/{checkpoint}.json",
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
