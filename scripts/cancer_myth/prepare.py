"""Questions in the published form -> canonical items (bad records stop the run here)."""

from oncoeval.io import setup_script_logging
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.prepare(snakemake.input[0], snakemake.output[0])
