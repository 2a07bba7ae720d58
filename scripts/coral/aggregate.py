"""Entry point of coral_aggregate: every model's scores -> tables and Figure 3 panels."""

from pathlib import Path

import pandas as pd

from oncoeval.io import read_jsonl, setup_script_logging, write_table
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.coral.aggregate import build_tables, figure3, metadata_from_items

log = setup_script_logging(snakemake.log[0])
settings = BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap})
scores = {
    model: pd.read_csv(path, sep="\t", dtype={"doc_id": str, "section": str})
    for model, path in zip(snakemake.params.models, snakemake.input.scores, strict=True)
}
metadata = metadata_from_items(read_jsonl(snakemake.input.notes_items))
tables = build_tables(scores, metadata, settings)
out_dir = Path(snakemake.output.tables[0]).parent
for name, (table, title, notes) in tables.items():
    write_table(table, out_dir / f"{name}.tsv", out_dir / f"{name}.md", title=title, notes=notes)
fig_dir = Path(snakemake.output.figures[0]).parent
fig_dir.mkdir(parents=True, exist_ok=True)
for metric, name in (("bleu4", "BLEU-4"), ("rouge1", "ROUGE-1"), ("em_f1", "exact-match F1")):
    figure3(tables["by_field"][0], metric, fig_dir / f"figure3_{metric}.png", f"CORAL: {name}")
    figure3(
        tables["by_cancer_type"][0],
        metric,
        fig_dir / f"figureS2_{metric}.png",
        f"CORAL: {name} by cancer type",
        series=("model", "cancer_type"),
    )
log.info("tables and figures for %d models", len(scores))
