"""Collect the synthetic notes; write the synth_predict request set (logic: requests)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_collect

setup_script_logging(snakemake.log[0])
synth_collect(
    snakemake.input.tree,
    snakemake.input.targets,
    list(snakemake.input.notes),
    snakemake.input.check,
    snakemake.params.synth,
    snakemake.input.template,
    dict(snakemake.output.items()),
)
