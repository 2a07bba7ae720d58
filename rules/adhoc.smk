# Ad-hoc request sets from the config's `adhoc` key, answered by every evaluated model (their
# targets: oncoeval.workflow.dag.study_targets).


rule adhoc_requests:
    input:
        lambda wc: config["adhoc"][wc.requestset],
    output:
        layout.ResultPaths(run_wf.ADHOC).requests("{requestset}"),
    log:
        "logs/adhoc/requests/{requestset}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/adhoc_requests.py"
