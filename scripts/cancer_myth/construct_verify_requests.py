"""Responder answers of myth i -> the verifier's request set."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps
from oncoeval.studies.cancer_myth.requests import VerifierPrompt

setup_script_logging(snakemake.log[0])
prompt = VerifierPrompt.from_files(
    snakemake.input.template,
    snakemake.input.example_template,
    snakemake.input.examples,
    snakemake.params.max_new_tokens,
    structured=snakemake.params.structured,
)
construct_steps.construct_verify_requests(snakemake.input.answers, prompt, snakemake.output[0])
