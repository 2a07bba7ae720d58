"""Every step of every generator -> raw generations and the hard (score -1) candidates."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_collect(
    list(snakemake.input.steps), snakemake.output.generated, snakemake.output.candidates
)
