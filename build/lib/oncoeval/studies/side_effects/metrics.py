"""Per-response metrics (§3.6) and the base/specified overlap ratio.

- precision = matched predictions / predictions (0 for an empty list: nothing listed is right);
- recall = matched reference items / reference items of the site;
- F1, their harmonic mean (0 when both are 0);
- recall per onset x frequency cell, over the site's reference items in that cell (NaN where
  the cell is empty);
- recall by onset, the mean of its cells over the frequency levels, and recall by frequency, the
  mean of its cells over the onsets (Tables 6 and 7: "averaged across frequency levels" and
  "across temporal onset"); empty cells are left out of the mean. The recall of all the
  stratum's items taken together is kept as ``recall_<stratum>_pooled``;
- overlap = |A∩B| / |A∪B| with |A∩B| the one-to-one matches between the two lists and
  |A∪B| = |A| + |B| - |A∩B| (NaN when both lists are empty).
"""

from __future__ import annotations

import math

import pandas as pd

from .reference import FREQUENCIES, ONSETS

STRATA = [("onset", v) for v in ONSETS] + [("frequency", v) for v in FREQUENCIES]
CELLS = [(onset, frequency) for onset in ONSETS for frequency in FREQUENCIES]
STRATUM_COLUMNS = [f"recall_{v}" for _, v in STRATA]
POOLED_COLUMNS = [f"recall_{v}_pooled" for _, v in STRATA]
CELL_COLUMNS = [f"recall_{o}_{f}" for o, f in CELLS]


def prf(n_pred: int, n_ref: int, n_matched: int) -> tuple[float, float, float]:
    precision = n_matched / n_pred if n_pred else 0.0
    recall = n_matched / n_ref if n_ref else math.nan
    if math.isnan(recall):
        return precision, recall, math.nan
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _recall(items: pd.Series, matched_items: set[str]) -> float:
    return sum(item in matched_items for item in items) / len(items) if len(items) else math.nan


def _mean(values: list[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return sum(present) / len(present) if present else math.nan


def stratified_recall(site_reference: pd.DataFrame, matched_items: set[str]) -> dict[str, float]:
    """Recall per onset x frequency cell, per stratum as the mean of its cells, and pooled."""
    cells = {
        (o, f): _recall(
            site_reference.loc[
                (site_reference["onset"] == o) & (site_reference["frequency"] == f),
                "side_effect",
            ],
            matched_items,
        )
        for o, f in CELLS
    }
    out = {}
    for column, value in STRATA:
        own = [cells[c] for c in CELLS if c[0 if column == "onset" else 1] == value]
        out[f"recall_{value}"] = _mean(own)
    for column, value in STRATA:
        items = site_reference.loc[site_reference[column] == value, "side_effect"]
        out[f"recall_{value}_pooled"] = _recall(items, matched_items)
    out.update({f"recall_{o}_{f}": cells[(o, f)] for o, f in CELLS})
    return out


def score_response(n_pred: int, site_reference: pd.DataFrame, pairs: list[tuple[int, int]]) -> dict:
    """Counts, P/R/F1 and stratified recall of one response, given its matched pairs."""
    refs = list(site_reference["side_effect"])
    matched = {refs[j] for _, j in pairs}
    precision, recall, f1 = prf(n_pred, len(refs), len(pairs))
    return {
        "n_pred": n_pred,
        "n_ref": len(refs),
        "n_matched": len(pairs),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        **stratified_recall(site_reference, matched),
    }


def overlap_ratio(n_a: int, n_b: int, n_common: int) -> float:
    union = n_a + n_b - n_common
    return n_common / union if union else math.nan
