"""One model's per-note scores and self-consistency (logic: score.score_model)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.score import score_model

setup_script_logging(snakemake.log[0])
score_model(
    snakemake.input.notes,
    snakemake.input.rollouts,
    snakemake.output.scores,
    snakemake.output.rollout_scores,
)
