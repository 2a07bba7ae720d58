"""Structured synthetic notes: requests from the generator's records (logic: stages)."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.guidelines.stages import synth_structured_notes

setup_script_logging(snakemake.log[0])
synth_structured_notes(
    snakemake.input.tree,
    snakemake.input.notes,
    snakemake.input.targets,
    snakemake.input.records[0],
    snakemake.params.synth,
    snakemake.input.template,
    snakemake.output[0],
)
