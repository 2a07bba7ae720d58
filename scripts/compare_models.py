"""Entry point of the `compare_models` rule (logic: oncoeval.workflow.comparison.write_study_comparison)."""

from oncoeval.core.io import setup_script_logging
from oncoeval.stats.compare import CompareSettings
from oncoeval.workflow.comparison import write_study_comparison

setup_script_logging(snakemake.log[0])
inputs = {k: v for k, v in snakemake.input.items() if k != "scores"}
write_study_comparison(
    snakemake.wildcards.study,
    dict(zip(snakemake.params.models, snakemake.input.scores, strict=True)),
    inputs,
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    CompareSettings.from_config(
        {"comparisons": snakemake.params.comparisons, "bootstrap": snakemake.params.bootstrap}
    ),
    {**snakemake.params.study, "judge_correction": snakemake.params.judge_correction},
)
