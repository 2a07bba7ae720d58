"""Entry point of the `convert_model` rule: one conversion a backend asks for (logic:
oncoeval.backends.convert, which hands it to the backend that converts such files)."""

import torch

from oncoeval.backends import convert
from oncoeval.core.io import setup_script_logging

setup_script_logging(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
convert(snakemake.input.gguf, snakemake.output.manifest, name=snakemake.wildcards.checkpoint)
