"""Entry point of coral_requests: items x subtypes -> one shared request set."""

from pathlib import Path

from oncoeval.core.io import read_jsonl, setup_script_logging
from oncoeval.core.records import write_requests
from oncoeval.studies.coral.requests import build_requests

log = setup_script_logging(snakemake.log[0])
requests = build_requests(
    read_jsonl(snakemake.input.notes_items),
    subtypes=list(snakemake.params.subtypes),
    prompt_dir=Path(snakemake.input.system).parent,
    params={
        "temperature": float(snakemake.params.temperature),
        "max_new_tokens": int(snakemake.params.max_new_tokens),
    },
)
write_requests(snakemake.output.requests, requests)
log.info("%d requests", len(requests))
