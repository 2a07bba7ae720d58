"""Entry point of `report_provenance` (logic: oncoeval.report.provenance)."""

from oncoeval.config.checks import models_by_id, used_models
from oncoeval.core.io import setup_script_logging
from oncoeval.report.provenance import write

setup_script_logging(snakemake.log[0])
entries = models_by_id(snakemake.config)
models = {mid: entries[mid] for mid in snakemake.params.models}
write(
    snakemake.config,
    models,
    snakemake.output.json,
    snakemake.output.html,
    used={m: sorted(s) for m, s in used_models(snakemake.config).items()},
)
