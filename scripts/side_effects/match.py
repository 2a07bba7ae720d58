"""Score stage, first half: the configured matcher pairs predictions with reference items
(and base with specified lists), one-to-one; the embedding model is loaded once per job."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.score import match_file

setup_script_logging(snakemake.log[0])
match_file(
    parsed_path=snakemake.input.parsed,
    reference_path=snakemake.input.reference,
    settings=snakemake.params.matcher,
    out_path=snakemake.output[0],
    synonyms_path=snakemake.input.get("synonyms"),
    judged_path=snakemake.input.get("judged"),
)
