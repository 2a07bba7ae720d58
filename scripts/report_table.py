"""Entry point of `report_table` (logic: oncoeval.report.tables)."""

from pathlib import Path

from oncoeval.io import setup_script_logging
from oncoeval.report.tables import tsv_page

setup_script_logging(snakemake.log[0])
title = f"{snakemake.wildcards.study}: {snakemake.wildcards.entry_path}"
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
