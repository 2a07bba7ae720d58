"""Score stage: per-unit scores of one model's parsed rows against gold.

A unit is one (gold view, note, section, subtype, field) that the model was asked about: every
response gives units for each scored field of its subtype under each gold derivation
(``gold.GOLD_VIEWS``). Its predictions are the strings ``"<primary> <value>"`` of the parsed
tuples, its gold the same strings from ``gold.tsv`` (one per gold tuple, so two mentions of one
symptom in the published gold are two strings, as the public code lists them).

An answer without any tuple (empty, ``unknown``, ``N/A``, ``none``, prose only) and a missing gold
both become the subtype's default all-unknown tuple, as in the public code, so each side is then
the string ``"unknown unknown"`` (primary and value both unknown): a unit with no gold that the
model answers ``unknown`` scores 1 on every metric, as the published numbers count it.
``n_gold`` and ``gold_unknown_only`` let the stricter views drop such units (see aggregate).

A failed call (a response with ``error``: 401, timeout, refused prompt) is not an answer: its
units get ``unscored`` true and no metric, and every table counts them in ``n_unscored``.
"""

from __future__ import annotations

import pandas as pd

from .gold import GOLD_VIEWS, scored_fields
from .metrics import bleu4, exact_match, rouge1
from .tasks import SUBTYPES, UNKNOWN

# unit: the resampling unit (the note, its fields averaged within it); cluster: the note's
# patient (metadata patient_id), else the note itself.
SCORE_COLUMNS = [
    "gold_view",
    "unit",
    "cluster",
    "doc_id",
    "section",
    "subtype",
    "field",
    "bleu4",
    "rouge1",
    "em_precision",
    "em_recall",
    "em_f1",
    "n_pred",
    "n_gold",
    "gold_unknown_only",
    "parse_failures",
    "unscored",
]
# The default tuple's pair string: primary and value both unknown (tasks.UNKNOWN).
DEFAULT_PAIR = f"{UNKNOWN} {UNKNOWN}"
METRIC_COLUMNS = ("bleu4", "rouge1", "em_precision", "em_recall", "em_f1")


def score_unit(predictions: list[str], golds: list[str], gold_values=None) -> dict:
    """Scores of one unit; ``gold_values`` are the gold field values (to spot unknown-only).

    An empty side is the default tuple's pair ``"unknown unknown"``, as the public code scores it.
    """
    gold_unknown_only = all(v == UNKNOWN for v in (gold_values or []))
    preds = predictions or [DEFAULT_PAIR]
    refs = golds or [DEFAULT_PAIR]
    precision, recall, f1 = exact_match(preds, refs)
    return {
        "bleu4": bleu4(preds, refs),
        "rouge1": rouge1(preds, refs),
        "em_precision": precision,
        "em_recall": recall,
        "em_f1": f1,
        "n_pred": len(predictions),
        "n_gold": len(golds),
        "gold_unknown_only": gold_unknown_only,
    }


def clusters_from_items(items: list[dict]) -> dict[str, str]:
    """doc_id -> its patient (the metadata's patient_id), for the notes that have one."""
    return {i["doc_id"]: i["patient_id"] for i in items if i.get("patient_id")}


def score_model(parsed: pd.DataFrame, gold: pd.DataFrame, patients=None) -> pd.DataFrame:
    """Per-unit scores of one model (columns SCORE_COLUMNS), for every gold view; ``patients``:
    doc_id -> patient (the cluster), a note without one its own cluster."""
    patients = patients or {}
    keys = ["doc_id", "section", "subtype"]
    # (view, doc, section, subtype, field) -> gold rows
    gold_by = {k: g for k, g in gold.groupby(["view", *keys, "field"], sort=False)}
    rows = []
    for view, rules in GOLD_VIEWS.items():
        for (doc_id, section, subtype), group in parsed.groupby(keys, sort=True):
            st = SUBTYPES[subtype]
            failed_call = bool((group["status"] == "error").any())
            failures = int((group["status"] == "failed").sum())
            ok = group[(group["status"] == "ok") & (group["tuple_name"] == st.tuple_name)]
            for f in scored_fields(subtype, rules):
                g = gold_by.get((view, doc_id, section, subtype, f))
                golds = g["value"].astype(str).tolist() if g is not None else []
                values = g["field_value"].astype(str).tolist() if g is not None else []
                base = {
                    "gold_view": view,
                    "unit": doc_id,
                    "cluster": patients.get(doc_id, doc_id),
                    "doc_id": doc_id,
                    "section": section,
                    "subtype": subtype,
                    "field": f,
                }
                if failed_call:  # no answer: nothing to score, counted apart
                    unit = dict.fromkeys(METRIC_COLUMNS, float("nan"))
                    unit.update(
                        n_pred=0,
                        n_gold=len(golds),
                        gold_unknown_only=all(v == UNKNOWN for v in values),
                    )
                else:
                    preds = ok.loc[ok["field"] == f, "value"].astype(str).tolist()
                    unit = score_unit(preds, golds, values)
                rows.append({**base, **unit, "parse_failures": failures, "unscored": failed_call})
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)
