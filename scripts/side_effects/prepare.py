"""Prepare stage: profiles (either form) and the reference, validated, in canonical files."""

from oncoeval.io import cap_jsonl, setup_script_logging
from oncoeval.studies.side_effects.prepare import prepare

setup_script_logging(snakemake.log[0])
prepare(
    profiles_path=snakemake.input.profiles,
    reference_path=snakemake.input.reference,
    site_aliases_path=snakemake.input.site_aliases,
    side_effect_aliases_path=snakemake.input.side_effect_aliases,
    out_profiles=snakemake.output.profiles,
    out_reference=snakemake.output.reference,
    out_vocabulary=snakemake.output.vocabulary,
    form=snakemake.params.form,
    site_assignment=snakemake.params.site_assignment,
    site_phrases=snakemake.params.site_phrases,
    mentions=snakemake.params.specify_mentions,
)
cap_jsonl(snakemake.output.profiles, snakemake.params.limit)  # smoke runs: the first N profiles
