"""Pools after myth i-1 + verdicts of myth i -> pools after myth i and the step's records."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.construct_update(
    snakemake.input.pools,
    snakemake.input.myths,
    snakemake.input.generated,
    snakemake.input.answers,
    snakemake.input.verdicts,
    int(snakemake.wildcards.index),
    snakemake.params.construction,
    snakemake.params.responder,
    snakemake.params.verifier,
    snakemake.output.pools,
    snakemake.output.steps,
)
