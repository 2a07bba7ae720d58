"""Validate the guideline tree and the notes; write the canonical inputs (logic: prepare.prepare)."""

from oncoeval.core.io import cap_jsonl, setup_script_logging
from oncoeval.studies.guidelines.prepare import prepare

setup_script_logging(snakemake.log[0])
prepare(
    snakemake.input.tree,
    snakemake.input.labelled,
    snakemake.input.unlabelled[0] if snakemake.input.unlabelled else None,
    trim=snakemake.params.trim,
    out=dict(snakemake.output.items()),
    primary_annotator=snakemake.params.primary_annotator,
)
# Smoke runs: the first N patients of each note set (labelled, unlabelled).
cap_jsonl(snakemake.output.notes, snakemake.params.limit, group_by="note_set")
