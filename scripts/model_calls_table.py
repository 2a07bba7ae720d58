"""Entry point of the `model_calls_table` rule (logic: oncoeval.calls.calls_table)."""

from oncoeval.calls import calls_table
from oncoeval.io import setup_script_logging

setup_script_logging(snakemake.log[0])
calls_table(
    f"results/{snakemake.wildcards.study}/responses",
    snakemake.params.models,
    snakemake.output.tsv,
    snakemake.output.md,
)
