"""Keep or drop each synthetic note (regenerated, or chosen in both orders) (logic: score.synth_benchmark)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.guidelines.score import synth_benchmark

setup_script_logging(snakemake.log[0])
synth_benchmark(
    snakemake.input.tree,
    snakemake.input.notes,
    snakemake.input.predict[0],
    snakemake.input.choose[0],
    snakemake.params.trim,
    snakemake.output.benchmark,
    snakemake.output.benchmark_md,
    synth=snakemake.params.synth,
)
