"""Labels where they are worth most: a blinded adjudication sheet, and its filled copy read back.

The sheet lists the items on which the judge is least sure (jurors disagree, a jury tie, a
verdict that stayed unreadable, or one that needed the reminder retry), each under an opaque
item id: the adjudicator sees the question, the information and the answer, never which model
answered or what the judge said, and rows are shuffled (seeded) so that one model's answers do
not come together. A filled sheet (the label column completed) maps back to (model, item) through
the same ids; blank labels are items not adjudicated yet and are skipped.
"""

from __future__ import annotations

import hashlib
import random

import pandas as pd

from ..core.errors import InputError

SHEET_COLUMNS = ["item", "question", "information", "answer"]
KEY_COLUMNS = ["item", "model", "question_id", "why"]


def blind_id(model: str, question_id: str) -> str:
    """An opaque, stable id for one model's answer to one question."""
    return hashlib.sha256(f"oncoeval-adjudication|{model}|{question_id}".encode()).hexdigest()[:12]


def uncertainty(record: dict) -> str:
    """Why the judge's verdict on this record is worth a human label ('' when it is not)."""
    votes = record.get("votes")
    if votes is not None:
        readable = [v for v in votes if v is not None]
        if record.get("parse_error") == "tie":
            return "jury tie"
        if len(set(readable)) > 1:
            return "jurors disagree"
    if record.get("score") is None and record.get("answer"):
        return "verdict unreadable"
    if record.get("retried"):
        return "verdict needed a retry"
    return ""


def select(judged_by_model: dict[str, list[dict]], max_items: int, seed: int) -> list[dict]:
    """Key rows of the items to adjudicate (most uncertain kinds first, then shuffled)."""
    order = ["jury tie", "jurors disagree", "verdict unreadable", "verdict needed a retry"]
    rows = []
    for model, records in judged_by_model.items():
        for rec in records:
            why = uncertainty(rec)
            if why:
                rows.append({"model": model, "record": rec, "why": why})
    rng = random.Random(seed)
    rng.shuffle(rows)
    rows.sort(key=lambda r: order.index(r["why"]))
    chosen = rows[:max_items] if max_items else rows
    rng.shuffle(chosen)
    return chosen


def write_sheet(chosen: list[dict], label_column: str, sheet_path, key_path) -> None:
    from ..core.io import write_table

    sheet, key = [], []
    for row in chosen:
        rec = row["record"]
        item = blind_id(row["model"], rec["question_id"])
        sheet.append(
            {
                "item": item,
                "question": rec["question"],
                "information": rec["correction"],
                "answer": rec.get("answer") or "",
                label_column: "",
            }
        )
        key.append(
            {
                "item": item,
                "model": row["model"],
                "question_id": rec["question_id"],
                "why": row["why"],
            }
        )
    write_table(pd.DataFrame(sheet, columns=SHEET_COLUMNS + [label_column]), sheet_path)
    write_table(pd.DataFrame(key, columns=KEY_COLUMNS), key_path)


def read_filled_sheet(path, label_column: str, allowed, items: dict) -> list[dict]:
    """Labelled rows of a filled sheet: ``{"item", "label", **items[item]}``.

    ``items`` maps every known blinded id to what it stands for (model, question_id, ...). An
    unknown id, a duplicate, or a label outside ``allowed`` stops with the file and the row named.
    """
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for column in ("item", label_column):
        if column not in df.columns:
            raise InputError(path, None, f"missing column {column!r}")
    allowed_text = {str(a): a for a in allowed}
    out, seen = [], set()
    for n, row in enumerate(df.to_dict("records"), start=2):  # row 1 is the header
        item, label = row["item"].strip(), row[label_column].strip()
        where = f"row {n} (item {item!r})"
        if item not in items:
            raise InputError(path, where, "unknown item id: not in this run's adjudication key")
        if item in seen:
            raise InputError(path, where, "item labelled twice")
        seen.add(item)
        if not label:
            continue
        if label not in allowed_text:
            raise InputError(path, where, f"{label_column} must be one of {list(allowed_text)}")
        out.append({"item": item, "label": allowed_text[label], **items[item]})
    return out
