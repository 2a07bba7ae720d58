"""Entry point of `report_provenance` (logic: oncoeval.report.provenance)."""

from oncoeval.io import setup_script_logging
from oncoeval.report.provenance import write

setup_script_logging(snakemake.log[0])
write(snakemake.config, snakemake.params.models, snakemake.output.json, snakemake.output.html)
