"""Patient notes: expert-labelled and unlabelled, JSONL (one record per patient) or a JSON list.

Labelled record: ``patient_id``, ``note``, ``label`` (``A -> B -> ...`` or
``NOT_GUIDELINE_COMPLIANT``), optional ``compliant`` (bool; ``false`` makes the label
``NOT_GUIDELINE_COMPLIANT``, traced path or not), ``reason``, ``annotator``. A note labelled by
two annotators is two records with the same id and note and different annotators. A record
without an id or a note, or a duplicate id otherwise, stops the run (InputError). A scored label
that is missing, does not parse, or is not a valid path from the root makes the patient
*unusable*: listed with the reason and excluded from every expert-label metric.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...core.errors import InputError
from ...core.inputs import check_length, compare_key, is_blank, read_json
from ...core.io import read_jsonl
from .parse import check_path, format_path, parse_label, trim_surveillance
from .tree import NOT_COMPLIANT, GuidelineTree


def read_records(path: str | os.PathLike) -> list[dict]:
    path = Path(path)
    if path.suffix == ".json":
        data = read_json(path, "note file")
        if not isinstance(data, list):
            raise InputError(path, "top level", "expected a list of patient records")
        return data
    return read_jsonl(path)


def _check_basic(path, records: list[dict], seen: dict, second_labels: bool = False) -> None:
    """Ids and notes present; an id seen before stops the run, except (``second_labels``) a
    further label of the same note in the same file by another annotator."""
    for i, rec in enumerate(records, start=1):
        pid = rec.get("patient_id")
        if isinstance(pid, bool) or not isinstance(pid, str | int) or is_blank(str(pid)):
            raise InputError(path, f"record {i}", "patient_id is missing (a string or an integer)")
        check_length(path, f"record {i}", str(pid), "id", "patient_id")
        # Ids are compared (and kept) in one Unicode form, without invisible characters.
        pid = rec["patient_id"] = compare_key(pid)
        if is_blank(rec.get("note")):
            raise InputError(path, f"record {i} (patient {pid})", "note is missing or empty")
        check_length(path, f"record {i} (patient {pid})", rec["note"], "document", "note")
        annotator = rec.get("annotator")
        if pid in seen:
            first = seen[pid]
            if not second_labels or first["path"] != str(path):
                raise InputError(
                    path, f"record {i}", f"duplicate patient_id {pid!r} ({first['where']})"
                )
            if rec["note"] != first["note"]:
                raise InputError(
                    path,
                    f"record {i} (patient {pid})",
                    f"a further label of patient {pid!r} carries a different note than {first['where']}",
                )
            if annotator is None or annotator in first["annotators"]:
                raise InputError(
                    path,
                    f"record {i}",
                    f"duplicate patient_id {pid!r} ({first['where']}): a second label needs "
                    "another, named annotator",
                )
            first["annotators"].add(annotator)
            continue
        seen[pid] = {
            "path": str(path),
            "where": f"first in {path}, record {i}",
            "note": rec["note"],
            "annotators": {annotator},
        }


def _read_label(rec: dict, tree: GuidelineTree, trim: bool) -> tuple[tuple | None, str | None]:
    """(label path, None) or (None, why the label is unusable)."""
    parsed = parse_label(rec.get("label"))
    if rec.get("compliant") is False:
        # the annotator marked the care non-compliant (with or without tracing it): the study
        # scores such patients against NOT_GUIDELINE_COMPLIANT (a valid "path")
        parsed = parse_label(NOT_COMPLIANT)
    if not parsed.ok:
        return None, "no label"
    label = tuple(parsed.path)
    if trim:
        label = trim_surveillance(tree, label)
    problem = check_path(tree, label)
    if problem:
        return None, f"label is not a valid path ({problem})"
    return label, None


def load_labelled(
    path, tree: GuidelineTree, trim: bool, seen: dict | None = None, primary_annotator=None
):
    """(usable, unusable): one row per patient. A note may carry labels from several annotators
    (one record each); the models are scored against the label of ``primary_annotator`` (the
    first label when None or when that annotator did not label the note). Every label is kept
    under ``labels`` for the inter-annotator table. Usable rows carry ``label_path`` as a list;
    unusable rows (the scored label is missing or invalid) the reason."""
    records = read_records(path)
    seen = {} if seen is None else seen
    _check_basic(path, records, seen, second_labels=True)
    by_patient: dict[str, list[dict]] = {}
    for rec in records:
        by_patient.setdefault(str(rec["patient_id"]), []).append(rec)
    usable, unusable = [], []
    for pid, recs in by_patient.items():
        labels = []
        for rec in recs:
            label, problem = _read_label(rec, tree, trim)
            labels.append(
                {
                    "annotator": rec.get("annotator"),
                    "label": format_path(label) if label else rec.get("label"),
                    "label_path": list(label) if label else None,
                    "problem": problem,
                }
            )
        primary = next(
            (
                i
                for i, r in enumerate(recs)
                if primary_annotator is not None and r.get("annotator") == primary_annotator
            ),
            0,
        )
        rec, chosen = recs[primary], labels[primary]
        base = {
            "patient_id": pid,
            "note": rec["note"],
            "annotator": rec.get("annotator"),
            "reason": rec.get("reason"),
            "labels": labels,
        }
        if chosen["problem"]:
            unusable.append({**base, "label": rec.get("label"), "problem": chosen["problem"]})
        else:
            usable.append({**base, "label_path": chosen["label_path"], "label": chosen["label"]})
    return usable, unusable


def load_unlabelled(path, seen: dict | None = None) -> list[dict]:
    records = read_records(path)
    _check_basic(path, records, {} if seen is None else seen)
    return [{"patient_id": str(r["patient_id"]), "note": r["note"]} for r in records]
