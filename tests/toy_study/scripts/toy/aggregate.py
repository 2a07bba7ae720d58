"""Entry point of toy_aggregate (logic: oncoeval.studies.toy.aggregate)."""

from oncoeval.core.io import read_tsv, setup_script_logging, write_table
from oncoeval.studies.toy.aggregate import accuracy_figure, accuracy_table

setup_script_logging(snakemake.log[0])
# The rule names each scores file by its model id.
scores = {model: read_tsv(snakemake.input[model]) for model in snakemake.input.keys()}
table = accuracy_table(scores, snakemake.params.bootstrap)
write_table(table, snakemake.output.accuracy, snakemake.output.accuracy_md, title="Toy accuracy")
accuracy_figure(table, snakemake.output.accuracy_figure)
