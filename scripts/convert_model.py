"""Entry point of the `convert_model` rule: GGUF -> regular checkpoint (logic: oncoeval.backends.hf)."""

import torch

from oncoeval.backends.hf import convert_and_describe
from oncoeval.io import setup_script_logging

setup_script_logging(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
convert_and_describe(
    snakemake.input.gguf, snakemake.output.manifest, expected_name=snakemake.wildcards.checkpoint
)
