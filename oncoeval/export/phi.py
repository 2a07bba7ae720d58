"""What of a ``contains_phi`` study may leave the machine: ids, numbers and hashes, never text.

``Redactor.text`` stands in for every input, answer, parse and judge reason of such a study:
the text itself when the config's ``report.include_phi_text`` is on or the study holds no PHI,
else ``sha256:<hex>`` of it, so that a reader holding the data can still match records to items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


def text_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Redactor:
    contains_phi: bool
    include_phi_text: bool

    @property
    def redacts(self) -> bool:
        return self.contains_phi and not self.include_phi_text

    def text(self, value):
        """``value`` as it may be exported (strings only are hashed; numbers pass)."""
        if value is None or not self.redacts or not isinstance(value, str):
            return value
        return text_hash(value)


def redactor_for(config: dict, study: str) -> Redactor:
    block = (config.get("studies") or {}).get(study) or {}
    report = config.get("report") or {}
    return Redactor(bool(block.get("contains_phi")), bool(report.get("include_phi_text")))
