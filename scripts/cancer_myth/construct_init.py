"""Initial valid / invalid examples -> one generator's pools before the first myth."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_init(
    snakemake.input.valid,
    snakemake.input.invalid,
    snakemake.wildcards.generator,
    snakemake.output[0],
)
