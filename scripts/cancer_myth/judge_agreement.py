"""Verifier replies on human-scored answers -> agreement, confusion, per-class rates, pairs."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.cancer_myth import aggregate

setup_script_logging(snakemake.log[0])
out = snakemake.output
aggregate.judge_validation(
    snakemake.input.human,
    snakemake.input.first,
    snakemake.input.retry,
    snakemake.params.verifier,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    out.judge_agreement,
    out.judge_agreement_md,
    out.judge_confusion,
    out.judge_confusion_md,
    out.verifier_pairs,
    out.judge_per_class,
    out.judge_per_class_md,
    snakemake.params.combine,
    snakemake.input.adjudicated or None,
    dict(zip(snakemake.params.models, snakemake.input.judged, strict=True)),
)
