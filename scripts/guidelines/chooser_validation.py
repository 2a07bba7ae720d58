"""The synthetic chooser against human labels of its cases (logic: chooser_validation)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines.chooser_validation import write_chooser_validation

setup_script_logging(snakemake.log[0])
out = snakemake.output
write_chooser_validation(
    snakemake.input.benchmark,
    snakemake.input.labels,
    {
        "summary": (out.judge_agreement, out.judge_agreement_md),
        "confusion": (out.judge_confusion, out.judge_confusion_md),
        "per_class": (out.judge_per_class, out.judge_per_class_md),
    },
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
)
