"""Classifier replies -> categories, Algorithm 1 balancing, dataset in the published format."""

from oncoeval.core.io import setup_script_logging
from oncoeval.studies.cancer_myth import construct_steps

setup_script_logging(snakemake.log[0])
construct_steps.construct_dataset(
    snakemake.input.candidates,
    snakemake.input.classified,
    snakemake.params.classifier,
    {
        "select_per_model": snakemake.params.select_per_model,
        "select_per_category": snakemake.params.select_per_category,
        "seed": snakemake.params.seed,
    },
    snakemake.output.categories,
    snakemake.output.dataset,
    snakemake.output.balance,
)
