"""Validate a user's request set and copy it into results/ (logic: oncoeval.core.records)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.core.records import read_requests, write_requests

setup_script_logging(snakemake.log[0])
write_requests(snakemake.output[0], read_requests(snakemake.input[0]))
