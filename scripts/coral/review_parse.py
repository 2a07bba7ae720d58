"""Entry point of coral_review_parse: the experts' filled review sheet -> Table 2."""

from oncoeval.core.io import setup_script_logging, write_table
from oncoeval.studies.coral.review import read_sheet, table2

log = setup_script_logging(snakemake.log[0])
table = table2(read_sheet(snakemake.input.sheet))
write_table(
    table,
    snakemake.output.expert_review,
    snakemake.output.expert_review_md,
    title="Expert review of extracted outputs (Table 2 layout)",
    notes=[
        "Fractions of reviewed rows per category: 1 correct; 2a extra correct information; "
        "2b correct but incomplete; 2c extra incorrect information; 3a ambiguous note; "
        "3b answer from the note but wrong for the question; 3c fabricated; 3d said unknown "
        "although the note has the answer. `not_reviewed` counts rows left blank.",
        f"Sheet: {snakemake.input.sheet}",
    ],
)
log.info("%d items", len(table))
