"""Verifier replies on human-scored answers -> agreement, confusion, per-class rates, pairs."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.cancer_myth import aggregate

setup_script_logging(snakemake.log[0])
aggregate.judge_validation(
    {
        "human": snakemake.input.human,
        "first": snakemake.input.first,
        "retry": snakemake.input.retry,
        "adjudicated": snakemake.input.adjudicated or None,
    },
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.params.verifier,
    snakemake.params.combine,
    dict(zip(snakemake.params.models, snakemake.input.judged, strict=True)),
)
