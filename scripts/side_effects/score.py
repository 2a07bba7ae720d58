"""Score stage: per-response P/R/F1, stratified recall, and base/specified overlap."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.score import score_files

setup_script_logging(snakemake.log[0])
score_files(
    parsed_path=snakemake.input.parsed,
    matches_path=snakemake.input.matches,
    reference_path=snakemake.input.reference,
    scores_path=snakemake.output.scores,
    overlap_path=snakemake.output.overlap,
)
