"""Agreement of each available matcher with the hand-labelled validation pairs, and the
configured matchers validated as judges (confusion matrix, per-class rates, Cohen's κ)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.side_effects.validation import write_agreement

setup_script_logging(snakemake.log[0])
out = snakemake.output
write_agreement(
    {name: snakemake.input[name] for name in snakemake.input.keys()},
    methods=snakemake.params.methods,
    matcher=snakemake.params.matcher,
    out_tsv=out.matcher_agreement,
    out_md=out.matcher_agreement_md,
    settings=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    judge_out={
        "summary": (out.judge_agreement, out.judge_agreement_md),
        "confusion": (out.judge_confusion, out.judge_confusion_md),
        "per_class": (out.judge_per_class, out.judge_per_class_md),
    },
)
