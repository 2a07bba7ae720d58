"""Entry point of coral_review_requests: one model's parsed outputs -> a review sheet for experts."""

import pandas as pd

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.coral.review import review_sheet, write_sheet

log = setup_script_logging(snakemake.log[0])
parsed = pd.read_csv(snakemake.input.parsed, sep="\t", dtype=str, keep_default_na=False)
sheet = review_sheet(parsed)
write_sheet(sheet, snakemake.output.review_sheet)
log.info("%d rows to review", len(sheet))
