"""Entry point of the `generate` rule (logic: oncoeval.workflow.generate)."""

from oncoeval.config.checks import models_by_id
from oncoeval.core.io import setup_script_logging
from oncoeval.workflow.calls import outcome_path_for
from oncoeval.workflow.generate import failed_share_allowed, run_generate
from oncoeval.workflow.gpuslots import local_gpu_slot
from oncoeval.workflow.waves import siblings

setup_script_logging(snakemake.log[0])
model = models_by_id(snakemake.config)[snakemake.wildcards.model]
# A local job that asks for GPUs gets its own card(s); SLURM jobs keep what SLURM gave them.
with local_gpu_slot(int(snakemake.resources.get("gpu", 0) or 0)):
    run_generate(
        requests_path=snakemake.input.requests,
        out_path=snakemake.output.responses,
        model_cfg=model,
        cache_dir=snakemake.config["cache_dir"],
        study=snakemake.wildcards.study,
        requestset=snakemake.wildcards.requestset,
        threads=snakemake.threads,
        max_failed_share=failed_share_allowed(model, snakemake.config),
        outcome_path=outcome_path_for(snakemake.log[0]),
        claim_stale_s=snakemake.config["claim_stale_s"],
        # The model's other request sets of this run (the plan the Snakefile's onstart wrote).
        siblings=siblings(model["id"], snakemake.wildcards.study, snakemake.wildcards.requestset),
    )
