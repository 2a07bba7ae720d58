"""Prepare stage: profiles (either form) and the reference, validated, in canonical files."""

from oncoeval.core.io import cap_jsonl, setup_script_logging
from oncoeval.studies.side_effects.prepare import prepare

setup_script_logging(snakemake.log[0])
prepare(
    {name: snakemake.input[name] for name in snakemake.input.keys()},
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    form=snakemake.params.form,
    site_assignment=snakemake.params.site_assignment,
    site_phrases=snakemake.params.site_phrases,
    mentions=snakemake.params.specify_mentions,
)
cap_jsonl(snakemake.output.profiles, snakemake.params.limit)  # smoke runs: the first N profiles
