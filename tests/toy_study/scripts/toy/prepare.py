"""Entry point of toy_prepare (logic: oncoeval.studies.toy.prepare)."""

from oncoeval.core.io import setup_script_logging, write_jsonl
from oncoeval.studies.toy.prepare import load_questions

log = setup_script_logging(snakemake.log[0])
questions = load_questions(snakemake.input.questions, snakemake.params.limit)
write_jsonl(snakemake.output.questions, questions)
log.info("%d questions", len(questions))
