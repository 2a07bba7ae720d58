"""Aggregate stage: Tables 1-7 with bootstrap CIs and the two figures."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.side_effects.aggregate import write_tables_and_figures

setup_script_logging(snakemake.log[0])
write_tables_and_figures(
    models=snakemake.params.models,
    score_paths=snakemake.input.scores,
    overlap_paths=snakemake.input.overlaps,
    outputs=dict(snakemake.output.items()),
    settings=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
)
