"""Prepare stage: BRAT notes -> items, section report and gold."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pandas as pd

from ...core.errors import InputError
from ...core.inputs import compare_key, read_table
from .brat import find_documents, read_document, read_schema
from .gold import GOLD_VIEWS, derive, gold_rows
from .sections import find_sections, marker_types, skip_chars
from .tasks import SUBTYPES

log = logging.getLogger(__name__)

# patient_id (optional): notes of one patient are one resampling cluster (workflow.STUDY.resampling).
METADATA_COLUMNS = ["doc_id", "cancer_type", "gender", "race_ethnicity", "age_group", "patient_id"]
GOLD_COLUMNS = [
    "view",
    "doc_id",
    "section",
    "subtype",
    "field",
    "value",
    "tuple_index",
    "primary",
    "field_value",
]


def read_metadata(path: str | Path | None, doc_ids: list[str]) -> pd.DataFrame:
    """Per-note metadata; missing file or columns give empty values, unknown doc ids stop."""
    if not path:
        return pd.DataFrame({"doc_id": doc_ids}).reindex(columns=METADATA_COLUMNS, fill_value="")
    meta = read_table(path, "\t", "metadata table", dtype=str, keep_default_na=False)
    if "doc_id" not in meta.columns:
        raise InputError(path, "header", "metadata needs a doc_id column")
    # Ids are matched in one Unicode form without invisible characters (compare_key): a
    # spreadsheet's NFD spelling or a stray zero-width space still finds its note.
    by_key = {compare_key(d): d for d in doc_ids}
    meta["doc_id"] = [by_key.get(compare_key(d), d) for d in meta["doc_id"]]
    dupes = meta["doc_id"][meta["doc_id"].duplicated()].tolist()
    if dupes:
        raise InputError(path, f"doc_id {dupes[0]!r}", f"duplicate doc_id rows: {dupes[:5]}")
    unknown = sorted(set(meta["doc_id"]) - set(doc_ids))
    if unknown:
        raise InputError(
            path, f"doc_id {unknown[0]!r}", f"doc_id values without a note: {unknown[:5]}"
        )
    meta = meta.reindex(columns=METADATA_COLUMNS, fill_value="")
    full = pd.DataFrame({"doc_id": doc_ids}).merge(meta, on="doc_id", how="left")
    return full.fillna("")


SECTION_COLUMNS = ["doc_id", "section", "found", "start", "end", "n_chars", "skip_chars"]


def prepare(notes_dir, conf_path, metadata_path, section_settings: dict):
    """(items, section report, gold) for every note under ``notes_dir``.

    Gold has one block of rows per derivation (``view`` published and clean, see ``gold.py``).
    Pre-annotations skipped by the reader are counted in the log.
    """
    schema = read_schema(conf_path)
    markers = marker_types(section_settings)
    docs = [read_document(t, a, schema, markers) for t, a in find_documents(notes_dir)]
    skipped = sum((d.skipped for d in docs), start=Counter())
    if skipped:
        log.info(
            "skipped pre-annotations (types not in annotation.conf): %s",
            ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())),
        )
    ids = [d.doc_id for d in docs]
    meta = read_metadata(metadata_path, ids).set_index("doc_id")
    names = section_settings["names"]
    items, report, gold = [], [], []
    for doc in docs:
        sections = find_sections(doc, section_settings)
        item = {"doc_id": doc.doc_id, **meta.loc[doc.doc_id].to_dict(), "sections": {}}
        for name in names:
            section = sections.get(name)
            report.append(
                {
                    "doc_id": doc.doc_id,
                    "section": name,
                    "found": section is not None,
                    "start": section.start if section else "",
                    "end": section.end if section else "",
                    "n_chars": len(section.text) if section else 0,
                    "skip_chars": skip_chars(doc, section) if section else 0,
                }
            )
            if section is None:
                log.warning("%s: section %s not found", doc.doc_id, name)
                continue
            item["sections"][name] = {
                "start": section.start,
                "end": section.end,
                "spans": [list(span) for span in section.parts],
                "text": section.text,
            }
            for view, rules in GOLD_VIEWS.items():
                for subtype in SUBTYPES:
                    tuples = derive(doc, section, subtype, rules)
                    gold += gold_rows(doc.doc_id, name, subtype, tuples, view)
        items.append(item)
    return (
        items,
        pd.DataFrame(report, columns=SECTION_COLUMNS),
        pd.DataFrame(gold, columns=GOLD_COLUMNS),
    )


def first_notes(items: list[dict], sections: pd.DataFrame, gold: pd.DataFrame, limit: int | None):
    """``prepare``'s output narrowed to its first ``limit`` notes (a capped run, ``limit=N``);
    everything when ``limit`` is 0 or None. Every note was read and checked before."""
    if not limit:
        return items, sections, gold
    items = items[:limit]
    kept = {item["doc_id"] for item in items}
    return items, sections[sections["doc_id"].isin(kept)], gold[gold["doc_id"].isin(kept)]
