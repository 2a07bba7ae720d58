"""Entry point of coral_aggregate: every model's scores -> tables and Figure 3 panels."""

import pandas as pd

from oncoeval.core.io import read_jsonl, setup_script_logging, write_table
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.coral.aggregate import build_tables, metadata_from_items, write_figures

log = setup_script_logging(snakemake.log[0])
settings = BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap})
scores = {
    model: pd.read_csv(path, sep="\t", dtype={"doc_id": str, "section": str})
    for model, path in zip(snakemake.params.models, snakemake.input.scores, strict=True)
}
metadata = metadata_from_items(read_jsonl(snakemake.input.notes_items))
tables = build_tables(scores, metadata, settings)
for name, (table, title, notes) in tables.items():
    out = snakemake.output
    write_table(table, out[name], out[f"{name}_md"], title=title, notes=notes)
write_figures(tables["by_field"][0], tables["by_cancer_type"][0], snakemake.output)
log.info("tables and figures for %d models", len(scores))
