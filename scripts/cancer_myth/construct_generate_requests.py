"""Pools after myth i-1 + myth i -> the generator's request (Figure 12)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_generate_requests(
    snakemake.input.pools,
    snakemake.input.myths,
    snakemake.input.template,
    int(snakemake.wildcards.index),
    snakemake.params.construction,
    snakemake.output[0],
)
