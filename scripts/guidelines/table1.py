"""Table 1: expert-label path overlap and treatment match per model (logic: aggregate)."""

from oncoeval.io import read_jsonl, setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import annotator_table, load_scores, table1_expert
from oncoeval.studies.guidelines.stages import read_rollouts

setup_script_logging(snakemake.log[0])
models = snakemake.params.models
rollouts = {m: read_rollouts(p) for m, p in zip(models, snakemake.input.rollouts, strict=True)}
table1_expert(
    load_scores(dict(zip(models, snakemake.input.scores, strict=True))),
    rollouts,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.output.table,
    snakemake.output.table_md,
)
annotator_table(
    read_jsonl(snakemake.input.notes),
    rollouts,
    snakemake.output.annotators,
    snakemake.output.annotators_md,
)
