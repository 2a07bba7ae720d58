"""Entry point of toy_requests (logic: oncoeval.studies.toy.requests)."""

from pathlib import Path

from oncoeval.core.io import read_jsonl, setup_script_logging
from oncoeval.core.records import write_requests
from oncoeval.studies.toy.requests import build_requests

setup_script_logging(snakemake.log[0])
requests = build_requests(
    read_jsonl(snakemake.input.questions),
    Path(snakemake.input.prompt).read_text(encoding="utf-8"),
    snakemake.params.max_new_tokens,
)
write_requests(snakemake.output.requests, requests)
