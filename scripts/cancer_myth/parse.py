"""One model's answers + verifier replies (first and retry, per juror) -> judged records."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import parse

setup_script_logging(snakemake.log[0])
parse.parse(
    snakemake.input.questions,
    snakemake.input.answers,
    snakemake.input.first,
    snakemake.input.retry,
    snakemake.params.verifier,
    snakemake.params.combine,
    snakemake.output.judged,
)
