"""Structured synthetic notes: requests from the generator's records (logic: requests)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_structured_notes

setup_script_logging(snakemake.log[0])
synth_structured_notes(
    {
        "tree": snakemake.input.tree,
        "examples": snakemake.input.examples[0] if snakemake.input.examples else None,
        "targets": snakemake.input.targets,
        "records": snakemake.input.records[0],
        "record_predict": snakemake.input.record_predict[0],
        "template": snakemake.input.template,
    },
    snakemake.params.synth,
    snakemake.params.trim,
    dict(snakemake.output.items()),
)
