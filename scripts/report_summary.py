"""Entry point of `report_summary` (logic: oncoeval.report.summary_html)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.report.summary_html import write_summary

setup_script_logging(snakemake.log[0])
write_summary(
    ".",
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    snakemake.params.studies,
    models=snakemake.params.models,
    replayed=snakemake.params.replayed,
    item_pages=snakemake.params.item_pages,
    scope=snakemake.params.scope,
)
