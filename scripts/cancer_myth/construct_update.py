"""Pools after myth i-1 + verdicts (and retries) of myth i -> pools after myth i and its records."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_update(
    snakemake.input.pools,
    snakemake.input.myths,
    snakemake.input.generated,
    snakemake.input.answers,
    snakemake.input.verdicts,
    snakemake.input.retry,
    int(snakemake.wildcards.index),
    snakemake.params.construction,
    snakemake.params.responder,
    snakemake.params.verifier,
    snakemake.output.pools,
    snakemake.output.steps,
)
