"""Questions in the published form -> canonical items (bad records stop the run here)."""

from oncoeval.core.io import cap_jsonl, setup_script_logging
from oncoeval.studies.cancer_myth import prepare

setup_script_logging(snakemake.log[0])
prepare.prepare(snakemake.input[0], snakemake.output[0])
cap_jsonl(snakemake.output[0], snakemake.params.limit)  # smoke runs: the first N questions
