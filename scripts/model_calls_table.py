"""Entry point of the `model_calls_table` rule (logic: oncoeval.calls.calls_table)."""

from oncoeval.calls import calls_table
from oncoeval.io import setup_script_logging
from oncoeval.layout import ResultPaths

setup_script_logging(snakemake.log[0])
calls_table(
    ResultPaths(snakemake.wildcards.study).responses(),
    snakemake.params.models,
    snakemake.output.tsv,
    snakemake.output.md,
)
