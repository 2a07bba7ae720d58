"""Every evaluated model's exposure item table -> the study's exposure table."""

from oncoeval.core.io import setup_script_logging
from oncoeval.exposure import stages

setup_script_logging(snakemake.log[0])
stages.exposure_table(
    list(snakemake.input),
    snakemake.params.models,
    snakemake.params.probes,
    snakemake.params.not_run,
    snakemake.output.tsv,
    snakemake.output.md,
    snakemake.output.figure,
)
