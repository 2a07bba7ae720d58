"""Entry point of toy_score (logic: oncoeval.studies.toy.score)."""

from oncoeval.core.io import read_jsonl, read_tsv, setup_script_logging, write_table
from oncoeval.studies.toy.score import score_answers

setup_script_logging(snakemake.log[0])
parsed = read_tsv(snakemake.input.parsed)
write_table(score_answers(parsed, read_jsonl(snakemake.input.questions)), snakemake.output.scores)
