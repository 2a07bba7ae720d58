"""Expert review (Table 2): a sheet pre-filled with one model's parsed outputs, and its read-back.

The sheet has one row per extracted entity (``kind`` Entity, e.g. ``RadiologyTest``) and one per
related pair (``kind`` Relation, e.g. ``RadiologyTest - Datetime``), as the paper's reviewer saw
them as tables. The reviewer fills ``category`` with the supplement's scheme:

- 1: correct;
- 2a: extra information, correct; 2b: correct but incomplete; 2c: extra information, incorrect;
- 3a: ambiguous note; 3b: hallucination from the note (wrong for the question);
  3c: fabricated; 3d: the answer is in the note, the model said unknown.

Every answer gets at least one row, so that the accuracy denominators hold every answer: an
answer without any tuple (empty, ``unknown``, prose only) is one Entity row whose output is
``unknown`` (the paper's category 3d is "the model returns unknown"), and an answer whose tuple
lines could not be read shows the unread lines. A failed call (an error instead of an answer) has
no row: there is nothing to review, and the score tables count it as unscored.

Read-back gives the fraction of each category per item, as Table 2, with a TOTAL/MEAN row.
Rows left blank are not reviewed and counted apart.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...core.errors import InputError
from ...core.inputs import read_excel, read_table
from .tasks import SUBTYPES

CATEGORIES = ("1", "2a", "2b", "2c", "3a", "3b", "3c", "3d")
SHEET_COLUMNS = [
    "doc_id",
    "section",
    "subtype",
    "tuple_index",
    "kind",
    "item",
    "output",
    "category",
    "comment",
]
EXTRA_LABELS = {"CancerDiagnosis": "FirstCancerDiagnosis"}


def review_sheet(parsed: pd.DataFrame) -> pd.DataFrame:
    """Sheet rows from one model's parsed rows: its tuples, and one row per answer without any."""
    ok = parsed[parsed["status"] == "ok"].copy()
    ok["tuple_index"] = ok["tuple_index"].astype(int)  # "10" must sort after "2"
    rows = []
    keys = ["doc_id", "section", "subtype", "tuple_index"]
    answers = parsed[parsed["status"] != "error"]
    with_tuples = set(map(tuple, ok[keys[:3]].drop_duplicates().to_numpy().tolist()))
    for (doc_id, section, subtype), answer in answers.groupby(keys[:3], sort=True):
        if (doc_id, section, subtype) in with_tuples:
            continue
        unread = answer.loc[answer["status"] == "failed", "raw"].astype(str).tolist()
        output = "unknown" if not unread else "unreadable: " + " | ".join(unread)
        rows.append(
            {
                "doc_id": doc_id,
                "section": section,
                "subtype": subtype,
                "tuple_index": -1,
                "kind": "Entity",
                "item": SUBTYPES[subtype].label,
                "output": output,
            }
        )
    for (doc_id, section, subtype, index), tup in ok.groupby(keys, sort=True):
        st = SUBTYPES[subtype]
        name = tup["tuple_name"].iloc[0]
        base = {"doc_id": doc_id, "section": section, "subtype": subtype, "tuple_index": index}
        if name == st.tuple_name:
            label, primary = st.label, tup["primary"].iloc[0]
            rows.append({**base, "kind": "Entity", "item": label, "output": primary})
        else:
            label, primary = EXTRA_LABELS.get(name, name), ""
        for field, values in tup.groupby("field", sort=False)["field_value"]:
            shown = "; ".join(values.astype(str))
            if primary:
                rows.append(
                    {
                        **base,
                        "kind": "Relation",
                        "item": f"{label} - {field}",
                        "output": f"{primary} | {shown}",
                    }
                )
            else:
                rows.append({**base, "kind": "Entity", "item": label, "output": shown})
    sheet = pd.DataFrame(rows, columns=SHEET_COLUMNS)
    sheet = sheet.sort_values(keys, kind="stable", ignore_index=True)
    sheet["category"] = ""
    sheet["comment"] = ""
    return sheet


def write_sheet(sheet: pd.DataFrame, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".xlsx":
        sheet.to_excel(path, index=False, sheet_name="review")
    else:
        sheet.to_csv(path, sep="\t", index=False, errors="backslashreplace")


def read_sheet(path: str | Path) -> pd.DataFrame:
    """A filled sheet (.xlsx, .tsv or .csv); a category outside the scheme stops with its row."""
    path = Path(path)
    if path.suffix == ".xlsx":
        sheet = read_excel(path, "review sheet", dtype=str)
    else:
        sheet = read_table(path, "," if path.suffix == ".csv" else "\t", "review sheet", dtype=str)
    missing = {"kind", "item", "category"} - set(sheet.columns)
    if missing:
        raise InputError(path, "header", f"review sheet lacks columns {sorted(missing)}")
    cats = sheet["category"].fillna("").astype(str).str.strip().str.lower()
    cats = cats.str.replace(r"^(\d)\.0$", r"\1", regex=True)  # spreadsheets turn 1 into 1.0
    for i, cat in cats.items():
        if cat and cat not in CATEGORIES:
            raise InputError(
                path, f"row {i + 2}", f"category {cat!r} is not one of {list(CATEGORIES)}"
            )
    sheet["category"] = cats
    return sheet


def table2(sheet: pd.DataFrame) -> pd.DataFrame:
    """Fractions per category for each reviewed item (Entity rows first, most correct first)."""
    reviewed = sheet[sheet["category"] != ""]
    rows = []
    for (kind, item), group in reviewed.groupby(["kind", "item"], sort=False):
        counts = group["category"].value_counts()
        row = {"kind": kind, "item": item, "sample_size": len(group)}
        row.update({c: counts.get(c, 0) / len(group) for c in CATEGORIES})
        row["not_reviewed"] = int(
            ((sheet["kind"] == kind) & (sheet["item"] == item) & (sheet["category"] == "")).sum()
        )
        rows.append(row)
    table = pd.DataFrame(rows, columns=["kind", "item", "sample_size", *CATEGORIES, "not_reviewed"])
    if len(table):
        table = table.sort_values(["kind", "1"], ascending=[True, False], kind="stable")
        counts = reviewed["category"].value_counts()
        total = {"kind": "TOTAL/MEAN", "item": "", "sample_size": len(reviewed)}
        total.update({c: counts.get(c, 0) / len(reviewed) for c in CATEGORIES})
        total["not_reviewed"] = int((sheet["category"] == "").sum())
        table = pd.concat([table, pd.DataFrame([total])], ignore_index=True)
    return table
