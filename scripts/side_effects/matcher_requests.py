"""Judge requests of the llm matcher: one per list to match (reference and overlap)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.requests import write_judge_requests

setup_script_logging(snakemake.log[0])
write_judge_requests(
    parsed_path=snakemake.input.parsed,
    reference_path=snakemake.input.reference,
    template_path=snakemake.input.template,
    max_new_tokens=snakemake.params.judge_max_new_tokens,
    out_path=snakemake.output[0],
)
