"""The generator traces the path back from each structured record it wrote (logic: requests)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_record_check_requests

setup_script_logging(snakemake.log[0])
synth_record_check_requests(
    snakemake.input.tree,
    snakemake.input.targets,
    snakemake.input.records[0],
    snakemake.params.synth,
    snakemake.input.template,
    snakemake.output[0],
)
