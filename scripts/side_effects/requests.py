"""Prompt stage: profiles x variants x regimes -> the `lists` request set."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.requests import write_list_requests

setup_script_logging(snakemake.log[0])
write_list_requests(
    profiles_path=snakemake.input.profiles,
    vocabulary_path=snakemake.input.vocabulary,
    templates=dict(zip(snakemake.params.regimes, snakemake.input.templates, strict=True)),
    list_size=snakemake.params.list_size,
    max_new_tokens=snakemake.params.max_new_tokens,
    out_path=snakemake.output[0],
)
