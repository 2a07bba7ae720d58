"""Every table and figure of the study: cross-model labels, Tables 1-3, Figures 2-4 and 6, the
meta-classifier, clustering and error analysis (logic: aggregate.aggregate)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import aggregate

setup_script_logging(snakemake.log[0])
models = snakemake.params.models
aggregate(
    snakemake.input.notes,
    dict(zip(models, snakemake.input.scores, strict=True)),
    dict(zip(models, snakemake.input.rollouts, strict=True)),
    list(snakemake.input.proxy),
    snakemake.params.settings,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    dict(snakemake.output.items()),
)
