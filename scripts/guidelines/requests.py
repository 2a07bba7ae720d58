"""k seeded path-prediction requests per note (logic: requests.rollouts_request_set)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.requests import rollouts_request_set

setup_script_logging(snakemake.log[0])
rollouts_request_set(
    snakemake.input.tree,
    snakemake.input.notes,
    snakemake.input.template,
    snakemake.params.rollouts,
    snakemake.output.rollouts,
)
