"""Stand-in for ``vllm.sampling_params``: what the backend imports for structured outputs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StructuredOutputsParams:
    json: str | dict | None = None
    choice: list[str] | None = None
