"""Pools after myth i-1 + verdicts (and retries) of myth i -> pools after myth i and its records."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_update(
    {name: snakemake.input[name] for name in snakemake.input.keys()},
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    int(snakemake.wildcards.index),
    snakemake.params.construction,
    snakemake.params.responder,
    snakemake.params.verifier,
)
