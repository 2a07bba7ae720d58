# The one rule that calls a model. Every LLM call of the workflow goes through it: evaluated
# models and judges alike. Its params hold only what the responses depend on (the model's
# signature), so editing another model, or an operational setting of this one, reruns nothing.


rule generate:
    input:
        requests="results/{study}/requests/{requestset}.jsonl",
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
