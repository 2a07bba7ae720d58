"""Entry point of the `generate` rule (logic: oncoeval.generate)."""

from oncoeval.config import models_by_id
from oncoeval.generate import run_generate
from oncoeval.io import setup_script_logging

setup_script_logging(snakemake.log[0])
run_generate(
    requests_path=snakemake.input.requests,
    out_path=snakemake.output.responses,
    model_cfg=models_by_id(snakemake.config)[snakemake.wildcards.model],
    cache_dir=snakemake.config["cache_dir"],
    study=snakemake.wildcards.study,
    requestset=snakemake.wildcards.requestset,
    threads=snakemake.threads,
)
