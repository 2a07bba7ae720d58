"""Entry point of `report_summary` (logic: oncoeval.report.summary)."""

from oncoeval.io import setup_script_logging
from oncoeval.report.summary import write_summary

setup_script_logging(snakemake.log[0])
out = snakemake.output
write_summary(
    ".",
    snakemake.params.studies,
    out.tsv,
    out.md,
    out.html,
    out.fragment,
    out.usage,
    models=snakemake.params.models,
    replayed=snakemake.params.replayed,
    item_pages=snakemake.params.item_pages,
    scope=snakemake.params.scope,
)
