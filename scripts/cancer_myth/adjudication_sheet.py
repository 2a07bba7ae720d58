"""Judged answers of every evaluated model -> the blinded adjudication sheet and its key."""

from pathlib import Path

from oncoeval.io import setup_script_logging
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.adjudication_sheet(
    {Path(p).stem: p for p in snakemake.input.judged},
    snakemake.output.sheet,
    snakemake.output.key,
    snakemake.params.max_items,
    snakemake.params.seed,
)
