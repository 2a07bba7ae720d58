"""Entry point of `report_items` (logic: oncoeval.report.drilldown)."""

from pathlib import Path

from oncoeval.core.io import setup_script_logging
from oncoeval.report.drilldown import items_page

setup_script_logging(snakemake.log[0])
wc, params = snakemake.wildcards, snakemake.params
Path(snakemake.output[0]).write_text(
    items_page(
        ".", wc.study, wc.model, params.max_chars, params.include_text, compare=params.compare
    ),
    encoding="utf-8",
    errors="backslashreplace",  # a lone surrogate in an answer is shown as \ud800
)
