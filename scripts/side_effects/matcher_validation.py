"""Agreement of each available matcher with the hand-labelled validation pairs."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.side_effects.validation import write_agreement

setup_script_logging(snakemake.log[0])
write_agreement(
    validation_path=snakemake.input.validation,
    methods=snakemake.params.methods,
    matcher=snakemake.params.matcher,
    synonyms_path=snakemake.input.synonyms,
    judged_path=snakemake.input.get("judged"),
    out_tsv=snakemake.output.table,
    out_md=snakemake.output.markdown,
    settings=BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
)
