"""Entry point of toy_referee_agreement (logic: oncoeval.studies.toy.aggregate)."""

from oncoeval.core.io import read_tsv, setup_script_logging, write_table
from oncoeval.studies.toy.aggregate import referee_agreement_table

setup_script_logging(snakemake.log[0])
# The rule names each parsed file by its model id, the referee's as "referee".
parsed = {name: read_tsv(snakemake.input[name]) for name in snakemake.input.keys()}
referee = parsed.pop("referee")
write_table(
    referee_agreement_table(parsed, referee),
    snakemake.output.referee_agreement,
    snakemake.output.referee_agreement_md,
    title="Toy: agreement with the referee",
)
