"""Answers + verifier replies (first and retry) -> per-question scores and judged records."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.score(
    snakemake.input.questions,
    snakemake.input.answers,
    snakemake.input.first,
    snakemake.input.retry,
    snakemake.params.verifier,
    snakemake.output.scores,
    snakemake.output.judged,
    snakemake.params.combine,
)
