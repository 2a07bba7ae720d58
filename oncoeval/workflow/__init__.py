"""The rules' side of the package: what the `.smk` files and the Snakefile call.

What the rules ask while the DAG is built (``dag``: the config settled, the studies and models
a run evaluates, its targets, a `generate` job's model and resources), the report's pages and
captions (``report``), the exposure audit's rules (``exposure``), the logic of the `generate`
rule (``generate``, with its engine waves ``waves`` and GPU cards ``gpuslots``), what the
`generate` jobs did (``calls``), run folders per config (``rundir``) and what `make run` shows
in the terminal (``terminal``). This is the top floor: nothing else in the package imports it.
"""
