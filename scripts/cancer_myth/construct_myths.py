"""Myth file (JSONL or concatenated JSON objects) -> canonical myths of the construction run."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_myths(snakemake.input[0], snakemake.output[0], snakemake.params.max_myths)
