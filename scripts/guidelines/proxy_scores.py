"""One model's self-consistency and synthetic proxy scores (logic: score.proxy_scores_model)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines.score import proxy_scores_model

setup_script_logging(snakemake.log[0])
proxy_scores_model(
    snakemake.wildcards.model,
    {name: snakemake.input[name] for name in snakemake.input.keys()},
    snakemake.output.proxy,
    pool=snakemake.params.pool,
    delta=snakemake.params.delta,
    trim=snakemake.params.trim,
    boot=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
)
