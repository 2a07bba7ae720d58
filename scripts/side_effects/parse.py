"""Parse stage: responses -> normalised side-effect lists with non-list line counts."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.side_effects.parse import parse_file

setup_script_logging(snakemake.log[0])
parse_file(snakemake.input[0], snakemake.output[0])
