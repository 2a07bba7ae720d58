"""Candidates -> the classifier's request set (Figure 14 style, JSON output)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_categorize_requests(
    snakemake.input.candidates,
    snakemake.input.template,
    snakemake.input.example_template,
    snakemake.input.examples,
    snakemake.params.max_new_tokens,
    snakemake.output[0],
)
