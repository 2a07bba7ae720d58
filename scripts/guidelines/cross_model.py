"""Cross-model consensus labels, agreement features and proxy scores (logic: aggregate)."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import cross_model, load_scores
from oncoeval.studies.guidelines.stages import read_rollouts

setup_script_logging(snakemake.log[0])
models = snakemake.params.models
cons = snakemake.params.consistency
cross_model(
    load_scores(dict(zip(models, snakemake.input.scores, strict=True))),
    {m: read_rollouts(p) for m, p in zip(models, snakemake.input.rollouts, strict=True)},
    pool=cons["pool"],
    min_agree=int(cons["min_agree"]),
    delta=float(cons["delta"]),
    boot=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    out=dict(snakemake.output.items()),
)
