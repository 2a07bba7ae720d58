"""Entry point of toy_parse (logic: oncoeval.studies.toy.parse)."""

from oncoeval.core.io import setup_script_logging, write_table
from oncoeval.core.records import read_responses
from oncoeval.studies.toy.parse import parsed_table

log = setup_script_logging(snakemake.log[0])
parsed = parsed_table(read_responses(snakemake.input.responses))
write_table(parsed, snakemake.output.parsed)
log.info("%s: %s", snakemake.wildcards.model, parsed["status"].value_counts().to_dict())
