"""Scores of every evaluated model -> PCS/PCR tables and figures."""

from oncoeval.core.io import setup_script_logging
from oncoeval.judges.correction import CorrectionSettings
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.cancer_myth import aggregate

setup_script_logging(snakemake.log[0])
aggregate.aggregate(
    dict(zip(snakemake.params.models, snakemake.input.scores, strict=True)),
    {name: snakemake.output[name] for name in snakemake.output.keys()},
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.input.validation or None,
    CorrectionSettings.from_config({"judge_correction": snakemake.params.judge_correction}),
    own_verifier=snakemake.params.own_verifier,
)
