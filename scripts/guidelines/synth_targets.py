"""Sample target paths; request structured records and unstructured notes (logic: requests)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_targets

setup_script_logging(snakemake.log[0])
synth_targets(
    snakemake.input.tree,
    snakemake.input.examples[0] if snakemake.input.examples else None,
    snakemake.params.synth,
    {"record": snakemake.input.record, "unstructured": snakemake.input.unstructured},
    dict(snakemake.output.items()),
)
