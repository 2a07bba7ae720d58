"""Entry point of `review_status` (logic: oncoeval.review.status)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.review.status import write_status

setup_script_logging(snakemake.log[0])
write_status(
    snakemake.wildcards.study,
    dict(snakemake.input.items()),
    snakemake.output.tsv,
    snakemake.output.md,
)
