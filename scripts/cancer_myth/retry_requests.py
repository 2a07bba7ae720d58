"""Unreadable verifier replies -> a second request set with a format reminder."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import requests

setup_script_logging(snakemake.log[0])
requests.retry_requests(
    snakemake.input.requests,
    snakemake.input.responses,
    snakemake.input.reminder,
    snakemake.output[0],
)
