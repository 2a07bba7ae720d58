"""Scores of every evaluated model -> PCS/PCR tables and figures."""

from pathlib import Path

from oncoeval.io import setup_script_logging
from oncoeval.judges.correction import CorrectionSettings
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.cancer_myth import steps

setup_script_logging(snakemake.log[0])
steps.tables(
    {Path(p).stem: p for p in snakemake.input.scores},
    {k: snakemake.output[k] for k in snakemake.output.keys()},
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.params.correction,
    snakemake.input.validation or None,
    CorrectionSettings.from_config({"judge_correction": snakemake.params.judge_correction}),
    own_verifier=snakemake.params.own_verifier,
)
