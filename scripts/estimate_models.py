"""Entry point of `estimate_models`: the model entries, study blocks and response cache the cost
estimate reads (it calls no model)."""

import json

from oncoeval.core.io import setup_script_logging

setup_script_logging(snakemake.log[0])
params = snakemake.params
with open(snakemake.output[0], "w", encoding="utf-8") as handle:
    json.dump(
        {"models": params.models, "studies": params.studies, "cache_dir": params.cache_dir},
        handle,
        indent=1,
        sort_keys=True,
        default=str,
    )
