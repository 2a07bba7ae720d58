"""What a study declares to be audited: ``exposure=ExposureSource(...)`` in its ``Study``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExposureSource:
    items: str  # the study's prepared items (JSONL), one item per line
    id_key: str
    text_key: str
    dataset: str  # as the prompt names it
    kind: str  # what one item is, as the prompt names it
    # When the published dataset became public (YYYY-MM, with its source); None: not documented.
    released: str | None = None
