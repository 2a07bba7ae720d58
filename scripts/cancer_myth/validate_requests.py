"""Human-scored answers -> the verifier's request set for judge validation."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import requests

setup_script_logging(snakemake.log[0])
prompt = requests.VerifierPrompt.from_files(
    snakemake.input.template,
    snakemake.input.example_template,
    snakemake.input.examples,
    snakemake.params.max_new_tokens,
    structured=snakemake.params.structured,
)
requests.validate_requests(snakemake.input.human, snakemake.output[0], prompt)
