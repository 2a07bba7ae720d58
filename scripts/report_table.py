"""Entry point of `report_table` (logic: oncoeval.report.tables)."""

from pathlib import Path

from oncoeval.core.io import setup_script_logging
from oncoeval.report.tables import tsv_page
from oncoeval.workflow.report import entry_of

setup_script_logging(snakemake.log[0])
title = entry_of(snakemake.wildcards, "tsv").page_title()
Path(snakemake.output[0]).write_text(
    tsv_page(
        snakemake.input[0],
        title,
        snakemake.params.caption,
        study=snakemake.wildcards.study,
        include_text=snakemake.params.include_text,
    ),
    encoding="utf-8",
)
