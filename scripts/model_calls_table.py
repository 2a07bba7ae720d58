"""Entry point of the `model_calls_table` rule (logic: oncoeval.workflow.calls.calls_table)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.core.layout import ResultPaths
from oncoeval.workflow.calls import calls_table

setup_script_logging(snakemake.log[0])
calls_table(
    ResultPaths(snakemake.wildcards.study).responses(),
    snakemake.params.models,
    snakemake.output.tsv,
    snakemake.output.md,
)
