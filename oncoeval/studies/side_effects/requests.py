"""Requests stage: the ``lists`` request set (profiles x variants x regimes), and the llm
matcher's judge requests (one per list to match against its reference or its pair)."""

from __future__ import annotations

import logging
from pathlib import Path

from ...core.inputs import read_template
from ...core.io import read_jsonl
from ...core.records import write_requests
from .matchers import LLMMatcher
from .prompts import build_requests
from .score import match_tasks, read_reference

log = logging.getLogger(__name__)


def write_list_requests(
    profiles_path, vocabulary_path, templates, list_size, max_new_tokens, out_path
) -> None:
    profiles = read_jsonl(profiles_path)
    vocab = Path(vocabulary_path).read_text(encoding="utf-8").splitlines()
    requests = build_requests(profiles, templates, vocab, tuple(list_size), max_new_tokens)
    write_requests(out_path, requests)
    log.info(
        "%d requests (%d profiles x 2 variants x %d regimes)",
        len(requests),
        len(profiles),
        len(templates),
    )


def write_judge_requests(
    parsed_path, reference_path, template_path, max_new_tokens, out_path
) -> None:
    tasks = match_tasks(read_jsonl(parsed_path), read_reference(reference_path))
    judge = LLMMatcher(read_template(template_path), max_new_tokens)
    # Empty lists need no judge: they have no pairs by definition.
    write_requests(out_path, judge.requests([t for _, t in tasks if t.left and t.right]))
