"""Generated questions of myth i -> the responder's request set."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_respond_requests(
    snakemake.input.generated,
    int(snakemake.wildcards.index),
    snakemake.params.construction,
    snakemake.params.system_prompt,
    snakemake.params.max_new_tokens,
    snakemake.output[0],
)
