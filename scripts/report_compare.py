"""Entry point of `report_compare` (logic: oncoeval.report.drilldown)."""

from pathlib import Path

from oncoeval.core.io import setup_script_logging
from oncoeval.report.drilldown import compare_page

setup_script_logging(snakemake.log[0])
params = snakemake.params
Path(snakemake.output[0]).write_text(
    compare_page(
        ".", snakemake.wildcards.study, params.models, params.max_chars, params.include_text
    ),
    encoding="utf-8",
)
