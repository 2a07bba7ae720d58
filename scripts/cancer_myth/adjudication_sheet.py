"""Judged answers of every evaluated model -> the blinded adjudication sheet and its key."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import aggregate

setup_script_logging(snakemake.log[0])
aggregate.adjudication_sheet(
    dict(zip(snakemake.params.models, snakemake.input.judged, strict=True)),
    snakemake.output.adjudication_sheet,
    snakemake.output.adjudication_key,
    snakemake.params.max_items,
    snakemake.params.seed,
)
