"""Entry point of `estimate_models`: the model entries the cost estimate reads (it calls no model)."""

import json

from oncoeval.io import setup_script_logging

setup_script_logging(snakemake.log[0])
with open(snakemake.output[0], "w", encoding="utf-8") as handle:
    json.dump(snakemake.params.models, handle, indent=1, sort_keys=True)
