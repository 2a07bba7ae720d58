"""What a study declares to be audited: ``EXPOSURE = ExposureSource(...)`` in its workflow.py."""

from __future__ import annotations

from dataclasses import dataclass

from . import study_workflow


@dataclass(frozen=True)
class ExposureSource:
    items: str  # the study's prepared items (JSONL), one item per line
    id_key: str
    text_key: str
    dataset: str  # as the prompt names it
    kind: str  # what one item is, as the prompt names it
    # When the published dataset became public (YYYY-MM, with its source); None: not documented.
    released: str | None = None


def source(study: str) -> ExposureSource | None:
    """The study's declared ``EXPOSURE``, or None (a study that cannot be audited)."""
    return getattr(study_workflow(study), "EXPOSURE", None)
