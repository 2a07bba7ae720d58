"""Items -> the responders' request set (zero-shot, question as the only user message)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import requests

setup_script_logging(snakemake.log[0])
requests.answer_requests(
    snakemake.input.questions,
    snakemake.output[0],
    snakemake.params.system_prompt,
    snakemake.params.max_new_tokens,
)
