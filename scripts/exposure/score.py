"""One model's answers to the exposure probes -> its per-item scores and controls' scores."""

from oncoeval.core.io import setup_script_logging
from oncoeval.exposure import stages

setup_script_logging(snakemake.log[0])
stages.item_table(snakemake.input.requests, snakemake.input.responses, snakemake.output[0])
