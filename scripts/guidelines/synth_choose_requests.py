"""Chooser requests (both orders) where the generator missed the target (logic: requests)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import synth_choose

setup_script_logging(snakemake.log[0])
synth_choose(
    snakemake.input.tree,
    snakemake.input.notes,
    snakemake.input.predict[0],
    snakemake.params.trim,
    snakemake.params.synth,
    snakemake.input.template,
    snakemake.output[0],
)
