"""Patient notes: expert-labelled and unlabelled, JSONL (one record per patient) or a JSON list.

Labelled record: ``patient_id``, ``note``, ``label`` (``A -> B -> ...`` or
``NOT_GUIDELINE_COMPLIANT``), optional ``compliant`` (bool; ``false`` turns the label into
``NOT_GUIDELINE_COMPLIANT``), ``reason``, ``annotator``. A record
without an id or a note, or a duplicate id, stops the run (InputError). A label that is missing,
does not parse, or is not a valid path through the tree makes the patient *unusable*: listed
with the reason and excluded from every expert-label metric.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...errors import InputError
from ...io import read_jsonl
from .parse import check_path, format_path, parse_label, trim_surveillance
from .tree import NOT_COMPLIANT, GuidelineTree


def read_records(path: str | os.PathLike) -> list[dict]:
    path = Path(path)
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise InputError(path, "top level", "expected a list of patient records")
        return data
    return read_jsonl(path)


def _check_basic(path, records: list[dict], seen: dict) -> None:
    for i, rec in enumerate(records, start=1):
        pid = rec.get("patient_id")
        if not isinstance(pid, str | int) or str(pid).strip() == "":
            raise InputError(path, f"record {i}", "patient_id is missing")
        pid = str(pid)
        if not isinstance(rec.get("note"), str) or not rec["note"].strip():
            raise InputError(path, f"record {i} (patient {pid})", "note is missing or empty")
        if pid in seen:
            raise InputError(path, f"record {i}", f"duplicate patient_id {pid!r} ({seen[pid]})")
        seen[pid] = f"first in {path}"


def load_labelled(path, tree: GuidelineTree, trim: bool, seen: dict | None = None):
    """(usable, unusable): usable rows carry ``label_path`` as a list; unusable rows a reason."""
    records = read_records(path)
    seen = {} if seen is None else seen
    _check_basic(path, records, seen)
    usable, unusable = [], []
    for rec in records:
        pid = str(rec["patient_id"])
        compliant = rec.get("compliant")
        parsed = parse_label(rec.get("label"))
        reason = None
        if compliant is False:
            # the annotator marked the care non-compliant (with or without tracing it): the study
            # scores such patients against NOT_GUIDELINE_COMPLIANT (a valid "path")
            parsed = parse_label(NOT_COMPLIANT)
        if not parsed.ok:
            reason = "no label"
        else:
            label = tuple(parsed.path)
            if trim:
                label = trim_surveillance(tree, label)
            problem = check_path(tree, label)
            if problem:
                reason = f"label is not a valid path ({problem})"
        base = {
            "patient_id": pid,
            "note": rec["note"],
            "annotator": rec.get("annotator"),
            "reason": rec.get("reason"),
        }
        if reason:
            unusable.append({**base, "label": rec.get("label"), "problem": reason})
        else:
            usable.append({**base, "label_path": list(label), "label": format_path(label)})
    return usable, unusable


def load_unlabelled(path, seen: dict | None = None) -> list[dict]:
    records = read_records(path)
    _check_basic(path, records, {} if seen is None else seen)
    return [{"patient_id": str(r["patient_id"]), "note": r["note"]} for r in records]
