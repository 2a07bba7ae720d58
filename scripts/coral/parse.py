"""Entry point of coral_parse: one model's responses -> parsed/{model}.tsv."""

import pandas as pd

from oncoeval.core.io import setup_script_logging, write_table
from oncoeval.core.records import read_responses
from oncoeval.studies.coral.parse import PARSED_COLUMNS, parsed_rows

log = setup_script_logging(snakemake.log[0])
rows = [row for resp in read_responses(snakemake.input.responses) for row in parsed_rows(resp)]
parsed = pd.DataFrame(rows, columns=PARSED_COLUMNS)
write_table(parsed, snakemake.output.parsed)
counts = parsed.drop_duplicates(["doc_id", "section", "subtype", "status", "line_no"])
log.info("status counts: %s", counts["status"].value_counts().to_dict())
