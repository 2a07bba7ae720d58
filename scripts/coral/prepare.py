"""Entry point of coral_prepare: BRAT notes -> items, section report, gold (oncoeval.studies.coral)."""

from oncoeval.core.io import setup_script_logging, write_jsonl, write_table
from oncoeval.studies.coral.prepare import first_notes, prepare

log = setup_script_logging(snakemake.log[0])
items, sections, gold = first_notes(
    *prepare(
        notes_dir=snakemake.params.notes_dir,
        conf_path=snakemake.input.conf,
        metadata_path=snakemake.input.metadata[0] if snakemake.input.metadata else None,
        section_settings=snakemake.params.sections,
    ),
    limit=snakemake.params.limit,
)
# (prepare logs each section it did not find)
missing = int((~sections["found"]).sum())
write_jsonl(snakemake.output.notes_items, items)
write_table(sections, snakemake.output.sections)
write_table(gold, snakemake.output.gold)
log.info("%d notes, %d sections missing, %d gold rows", len(items), missing, len(gold))
