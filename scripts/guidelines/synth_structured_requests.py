"""Structured synthetic notes: requests from the generator's records (logic: requests)."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_structured_notes

setup_script_logging(snakemake.log[0])
synth_structured_notes(
    snakemake.input.tree,
    snakemake.input.examples[0] if snakemake.input.examples else None,
    snakemake.input.targets,
    snakemake.input.records[0],
    snakemake.input.record_predict[0],
    snakemake.params.synth,
    snakemake.params.trim,
    snakemake.input.template,
    dict(snakemake.output.items()),
)
