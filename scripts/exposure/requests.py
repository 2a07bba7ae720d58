"""A study's prepared items -> one exposure probe's request set (items and their controls)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.exposure import stages

setup_script_logging(snakemake.log[0])
stages.probe_requests(
    snakemake.input.prepared,
    snakemake.input.template,
    snakemake.output[0],
    snakemake.wildcards.probe,
    snakemake.params.settings,
)
