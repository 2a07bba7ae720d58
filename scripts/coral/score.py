"""Entry point of coral_score: parsed tuples + gold -> scores/{model}.tsv."""

import pandas as pd

from oncoeval.core.io import read_jsonl, setup_script_logging, write_table
from oncoeval.studies.coral.score import clusters_from_items, score_model

log = setup_script_logging(snakemake.log[0])
parsed = pd.read_csv(snakemake.input.parsed, sep="\t", dtype=str, keep_default_na=False)
gold = pd.read_csv(snakemake.input.gold, sep="\t", dtype=str, keep_default_na=False)
scores = score_model(parsed, gold, clusters_from_items(read_jsonl(snakemake.input.notes)))
write_table(scores, snakemake.output.scores)
log.info("%d units scored", len(scores))
