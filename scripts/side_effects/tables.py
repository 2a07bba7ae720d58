"""Aggregate stage: Tables 1-7 with bootstrap CIs and the two figures."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.side_effects.stages import write_tables

setup_script_logging(snakemake.log[0])
write_tables(
    models=snakemake.params.models,
    score_paths=snakemake.input.scores,
    overlap_paths=snakemake.input.overlaps,
    table_paths=snakemake.output.tables,
    markdown_paths=snakemake.output.markdown,
    figure_paths=snakemake.output.figures,
    settings=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
)
