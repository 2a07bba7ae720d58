"""Verifier replies on human-scored answers -> agreement, confusion, per-class rates, pairs."""

from pathlib import Path

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.judge_validation(
    snakemake.input.human,
    snakemake.input.first,
    snakemake.input.retry,
    snakemake.params.verifier,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.output.tsv,
    snakemake.output.md,
    snakemake.output.confusion,
    snakemake.output.confusion_md,
    snakemake.output.pairs,
    snakemake.output.per_class,
    snakemake.output.per_class_md,
    snakemake.params.combine,
    snakemake.input.adjudicated or None,
    {Path(p).stem: p for p in snakemake.input.judged},
)
