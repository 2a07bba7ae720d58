"""Prepare: questions in the published form -> the canonical items file."""

from __future__ import annotations

import logging

from .data import load_questions, write_items

log = logging.getLogger(__name__)


def prepare(questions_path, items_path) -> None:
    items = load_questions(questions_path)
    write_items(items_path, items)
    log.info("%d questions from %s", len(items), questions_path)
