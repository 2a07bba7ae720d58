"""Entry point of the `stage_weights` rule: one local model's weights, resolved and checked
on the submitting host (logic: oncoeval.backends.weights)."""

import json

from oncoeval.backends.weights import stage
from oncoeval.core.io import atomic_write, setup_script_logging

log = setup_script_logging(snakemake.log[0])
record = stage(dict(snakemake.params.model))
log.info(
    "staged %s: %d weights file(s) in %s", record["model"], len(record["weights"]), record["folder"]
)
with atomic_write(snakemake.output[0]) as handle:
    handle.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
