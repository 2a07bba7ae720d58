"""Loaders for the published Cancer-Myth formats, and the canonical items file.

Questions: a JSON list (the published ``all_data*.json`` files) or JSONL of records with
``example_question``, ``example_assumption`` (the correction), ``category``, ``from_model``,
``source_info``, ``source_row``, ``source_type`` and ``raw_QID``. Keys beyond these (earlier answers,
scores) are kept under ``meta``. Myths: ``cancer``, ``myth``, ``fact``, ``source`` records, as JSONL
or as a stream of concatenated pretty-printed JSON objects (how the published myth file is written).
"""

from __future__ import annotations

import os
import re

from ...core.errors import InputError
from ...core.inputs import check_length, compare_key, decode_records, is_blank, read_text
from ...core.io import read_jsonl, write_jsonl

# The seven categories, in the paper's order (Figure 4), as the published files write them.
CATEGORIES = (
    "only/standard treatment",
    "no treatment",
    "inevitable side effect",
    "causal misattribution",
    "underestimate risk",
    "no symptoms means no disease",
    "other",
)
# Spellings met in the paper and in model output, mapped to the canonical labels.
CATEGORY_ALIASES = {
    "only treatment": "only/standard treatment",
    "standard treatment": "only/standard treatment",
    "only / standard treatment": "only/standard treatment",
    "underestimated risk": "underestimate risk",
    "no symptom no disease": "no symptoms means no disease",
    "no symptom, no disease": "no symptoms means no disease",
    "no symptoms, no disease": "no symptoms means no disease",
    "others": "other",
}
PUBLISHED_KEYS = (
    "example_question",
    "example_assumption",
    "category",
    "from_model",
    "source_info",
    "source_row",
    "source_type",
    "raw_QID",
)
MYTH_KEYS = ("cancer", "myth", "fact", "source")


def normalize_category(value) -> str | None:
    """Canonical category label, or None when ``value`` is not one of the seven."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"\s+", " ", value.strip().lower())
    key = CATEGORY_ALIASES.get(key, key)
    return key if key in CATEGORIES else None


def read_records(path: str | os.PathLike) -> list:
    """Records of a JSON list, a JSONL file or a stream of concatenated JSON objects."""
    return decode_records(read_text(path, "question file"), path)


def _question_id(record: dict, index: int, path) -> str:
    raw = record.get("raw_QID")
    if isinstance(raw, bool):
        raise InputError(
            path, f"record {index + 1}", f"raw_QID {raw!r} is not an id (a string or an integer)"
        )
    if raw is None or raw == "":
        raw = record.get("id", index)
    return str(raw)


def load_questions(path: str | os.PathLike) -> list[dict]:
    """Validated question items (see ``item_from_record``); bad records raise InputError."""
    records = read_records(path)
    if not records:
        raise InputError(path, "line 1", "no question records (the file is empty)")
    first = records[0] if len(records) == 1 and isinstance(records[0], dict) else {}
    wrapped = [k for k, v in first.items() if isinstance(v, list)]
    if wrapped and "example_question" not in first:  # {"questions": [...]}
        raise InputError(
            path,
            f"record 1 (key {wrapped[0]!r})",
            f"an object wrapping a list of {len(first[wrapped[0]])} records under "
            f"{wrapped[0]!r}; give the list itself (a JSON list, or one record per line)",
        )
    items, seen = [], {}
    for index, record in enumerate(records):
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise InputError(path, where, "expected a JSON object")
        item = item_from_record(record, index, path)
        qid = item["question_id"]
        key = compare_key(qid)  # ids that differ only in Unicode form or invisible characters
        if key in seen:
            raise InputError(
                path,
                f"{where} (id {qid!r})",
                f"duplicate question id (first in record {seen[key]})",
            )
        seen[key] = index + 1
        items.append(item)
    return items


def require_text(path, where: str, record: dict, keys) -> None:
    """Stop with InputError unless every key of ``record`` holds a non-empty string."""
    for key in keys:
        value = record.get(key)
        if is_blank(value):
            raise InputError(path, where, f"missing {key} (a non-empty string)")
        check_length(path, where, value, "text", key)


def item_from_record(record: dict, index: int, path) -> dict:
    qid = _question_id(record, index, path)
    check_length(path, f"record {index + 1}", qid, "id", "the question id")
    where = f"record {index + 1} (id {qid!r})"
    for key, label in (("example_question", "question"), ("example_assumption", "correction")):
        value = record.get(key)
        if is_blank(value):
            raise InputError(
                path,
                where,
                f"missing {label} ({key} must be a non-empty string; invisible characters "
                "such as zero-width spaces do not count)",
            )
        check_length(path, where, value, "text", key)
    category_raw = record.get("category")
    category = normalize_category(category_raw) if category_raw not in (None, "") else ""
    if category is None:
        raise InputError(
            path, where, f"unknown category {category_raw!r}; expected one of {list(CATEGORIES)}"
        )
    source_info = record.get("source_info") or {}
    if not isinstance(source_info, dict):
        raise InputError(path, where, "source_info must be an object")
    return {
        "question_id": qid,
        "question": record["example_question"].strip(),
        "correction": record["example_assumption"].strip(),
        "category": category,
        "from_model": str(record.get("from_model") or "unknown"),
        "source_info": source_info,
        "source_row": record.get("source_row"),
        "source_type": record.get("source_type"),
        "meta": {k: v for k, v in record.items() if k not in PUBLISHED_KEYS},
    }


def load_myths(path: str | os.PathLike) -> list[dict]:
    """Validated myth records (cancer, myth, fact, source) in file order."""
    records = read_records(path)
    if not records:
        raise InputError(path, "line 1", "no myth records (the file is empty)")
    myths = []
    for index, record in enumerate(records):
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise InputError(path, where, "expected a JSON object")
        require_text(path, where, record, ("cancer", "myth", "fact"))
        myth = {k: record.get(k) or "" for k in MYTH_KEYS}
        myth["source_row"] = index
        myth["meta"] = {k: v for k, v in record.items() if k not in MYTH_KEYS}
        myths.append(myth)
    return myths


def write_items(path, items: list[dict]) -> None:
    write_jsonl(path, items)


def read_items(path) -> list[dict]:
    return read_jsonl(path)
