"""One model's rollouts: parse, trim and validate every path (logic: parse.parse_rollouts)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.parse import parse_rollouts

setup_script_logging(snakemake.log[0])
parse_rollouts(
    snakemake.input.tree,
    snakemake.input.responses,
    snakemake.params.trim,
    snakemake.output.rollouts,
)
