"""Per-response metrics (§3.6) and the base/specified overlap ratio.

- precision = matched predictions / predictions (0 for an empty list: nothing listed is right);
- recall = matched reference items / reference items of the site;
- F1, their harmonic mean (0 when both are 0);
- recall per onset and per frequency stratum, over the site's reference items in that stratum
  (NaN where the stratum is empty);
- overlap = |A∩B| / |A∪B| with |A∩B| the one-to-one matches between the two lists and
  |A∪B| = |A| + |B| - |A∩B| (NaN when both lists are empty).
"""

from __future__ import annotations

import math

import pandas as pd

from .reference import FREQUENCIES, ONSETS

STRATA = [("onset", v) for v in ONSETS] + [("frequency", v) for v in FREQUENCIES]
STRATUM_COLUMNS = [f"recall_{v}" for _, v in STRATA]


def prf(n_pred: int, n_ref: int, n_matched: int) -> tuple[float, float, float]:
    precision = n_matched / n_pred if n_pred else 0.0
    recall = n_matched / n_ref if n_ref else math.nan
    if math.isnan(recall):
        return precision, recall, math.nan
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def stratified_recall(site_reference: pd.DataFrame, matched_items: set[str]) -> dict[str, float]:
    """recall_<stratum> for each onset and frequency stratum of the site's reference items."""
    out = {}
    for column, value in STRATA:
        items = site_reference.loc[site_reference[column] == value, "side_effect"]
        out[f"recall_{value}"] = (
            sum(item in matched_items for item in items) / len(items) if len(items) else math.nan
        )
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
