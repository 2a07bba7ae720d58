"""Entry point of coral_prepare: BRAT notes -> items, section report, gold (oncoeval.studies.coral)."""

from oncoeval.io import setup_script_logging, write_jsonl, write_table
from oncoeval.studies.coral.prepare import prepare

log = setup_script_logging(snakemake.log[0])
items, sections, gold = prepare(
    notes_dir=snakemake.params.notes_dir,
    conf_path=snakemake.input.conf,
    metadata_path=snakemake.input.metadata[0] if snakemake.input.metadata else None,
    section_settings=snakemake.params.sections,
)
if snakemake.params.limit:  # smoke runs: the first N notes
    items = items[: snakemake.params.limit]
    kept = {item["doc_id"] for item in items}
    sections = sections[sections["doc_id"].isin(kept)]
    gold = gold[gold["doc_id"].isin(kept)]
missing = sections[~sections["found"]]
for row in missing.itertuples():
    log.warning("section %s not found in %s", row.section, row.doc_id)
write_jsonl(snakemake.output.notes_items, items)
write_table(sections, snakemake.output.sections)
write_table(gold, snakemake.output.gold)
log.info("%d notes, %d sections missing, %d gold rows", len(items), len(missing), len(gold))
