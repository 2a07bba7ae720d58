"""One model's judged records -> its per-question scores."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import score

setup_script_logging(snakemake.log[0])
score.score(
    snakemake.input.judged,
    snakemake.params.verifier,
    snakemake.params.combine,
    snakemake.output.scores,
)
