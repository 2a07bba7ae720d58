"""Judge requests of the llm matcher on the validation pairs: one per labelled pair."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.validation import write_validation_requests

setup_script_logging(snakemake.log[0])
write_validation_requests(
    validation_path=snakemake.input.validation,
    template_path=snakemake.input.template,
    max_new_tokens=snakemake.params.judge_max_new_tokens,
    out_path=snakemake.output[0],
)
