"""Appendix D: divergence points and label errors flagged by rollouts (logic: aggregate)."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import error_analysis, load_scores
from oncoeval.studies.guidelines.stages import read_rollouts

setup_script_logging(snakemake.log[0])
models = snakemake.params.models
error_analysis(
    load_scores(dict(zip(models, snakemake.input.scores, strict=True))),
    {m: read_rollouts(p) for m, p in zip(models, snakemake.input.rollouts, strict=True)},
    int(snakemake.params.top_n),
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    dict(snakemake.output.items()),
    gamma=int(snakemake.params.gamma),
)
