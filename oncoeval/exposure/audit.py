"""Per item and probe: the model's score and its control's; per model and probe: the share of
items above the controls' 95th percentile, its Wilson interval, and a verdict.

A model that has not seen the items does on them what it does on their controls, so at most 5%
of its items beat the controls' 95th percentile (``control_threshold``) by chance. The verdict is *exposed* when the
interval's lower bound is above that 5%, *no evidence* otherwise, and *not testable* (with the
reason) when too few items were answered or a probe was not run.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from ..core.records import Request, Response
from . import scoring

PERCENTILE = 95.0
CHANCE = 1 - PERCENTILE / 100  # the share of unseen items expected above the percentile
# Fewest items answered (item and control both) for a verdict: below 19 controls no control
# is above the 95th percentile (control_threshold).
MIN_ITEMS = 19
ITEM_COLUMNS = ["item_id", "probe", "score", "control_score", "longest_run", "control_longest_run"]
TABLE_COLUMNS = [
    "model",
    "probe",
    "n",
    "n_unanswered",
    "control_p95",
    "flagged",
    "share_flagged",
    "share_flagged_ci_low",
    "share_flagged_ci_high",
    "verdict",
    "reason",
]


def item_rows(probe: str, requests: list[Request], responses: dict[str, Response]) -> pd.DataFrame:
    """One row per item of the probe: its score and its control's (NaN where the model gave no
    usable answer to either)."""
    scored: dict[tuple[str, bool], dict] = {}
    for req in requests:
        resp = responses.get(req.request_id)
        answer = _answer(probe, resp)
        scored[req.meta["item_id"], req.meta["control"]] = (
            scoring.score(probe, answer, req.meta["truth"]) if answer is not None else {}
        )
    rows = []
    for (item_id, control), own in scored.items():
        if control:
            continue
        ctl = scored.get((item_id, True), {})
        rows.append(
            {
                "item_id": item_id,
                "probe": probe,
                "score": own.get("score", np.nan),
                "control_score": ctl.get("score", np.nan),
                "longest_run": own.get("longest_run", np.nan),
                "control_longest_run": ctl.get("longest_run", np.nan),
            }
        )
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)


def _answer(probe: str, resp: Response | None):
    """What the probe scores: the text, or for the likelihood probe the token log-probabilities
    (None for a failed call or a reply without them)."""
    if resp is None or resp.error:
        return None
    if probe == "likelihood":
        return resp.token_logprobs or None
    return resp.text


def control_threshold(control_scores) -> float:
    """The controls' 95th percentile in the finite-sample (conformal) sense: the
    ceil(0.95 (n + 1))-th smallest of the n controls, so that an item the model has not seen
    (exchangeable with its controls) lies above it with probability at most 5%. (numpy's
    interpolated percentile of 21 controls is their second largest, which such an item beats
    with probability 2/22.) NaN with fewer than 19 controls, where no control is high enough."""
    values = np.sort(np.asarray(control_scores, dtype=float))
    values = values[~np.isnan(values)]
    k = math.ceil(PERCENTILE / 100 * (len(values) + 1))
    return float(values[k - 1]) if len(values) and k <= len(values) else float("nan")


def wilson(k: int, n: int) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def verdict(n: int, ci_low: float) -> tuple[str, str]:
    if n < MIN_ITEMS:
        return "not testable", f"{n} items answered with their controls (needs {MIN_ITEMS})"
    if ci_low > CHANCE:
        return "exposed", f"share above the controls' 95th percentile is above {CHANCE:.0%}"
    return "no evidence", f"share not above the {CHANCE:.0%} expected by chance"


def summarise(model: str, probe: str, rows: pd.DataFrame) -> dict:
    """The table row of one model and probe from its item rows."""
    both = rows.dropna(subset=["score", "control_score"])
    n = len(both)
    threshold = control_threshold(both["control_score"])
    flagged = int((both["score"] > threshold).sum()) if n else 0
    low, high = wilson(flagged, n) if n else (np.nan, np.nan)
    word, reason = verdict(n, low)
    return {
        "model": model,
        "probe": probe,
        "n": n,
        "n_unanswered": len(rows) - n,
        "control_p95": threshold,
        "flagged": flagged,
        "share_flagged": flagged / n if n else np.nan,
        "share_flagged_ci_low": low,
        "share_flagged_ci_high": high,
        "verdict": word,
        "reason": reason,
    }


def not_run_row(model: str, probe: str, reason: str) -> dict:
    row = dict.fromkeys(TABLE_COLUMNS, np.nan)
    row |= {"model": model, "probe": probe, "n": 0, "flagged": 0, "n_unanswered": 0}
    return row | {"verdict": "not testable", "reason": reason}


def exposure_table(
    per_model: dict[str, pd.DataFrame], probes, not_run: dict[str, dict[str, str]] | None = None
) -> pd.DataFrame:
    """Per model, each probe run (from its item rows), then each probe not run (``not_run``:
    model -> probe -> why), in the order of ``probes``."""
    out = []
    for model, rows in per_model.items():
        skipped = (not_run or {}).get(model, {})
        for probe in probes:
            if probe in skipped:
                out.append(not_run_row(model, probe, skipped[probe]))
            else:
                out.append(summarise(model, probe, rows[rows["probe"] == probe]))
    return pd.DataFrame(out, columns=TABLE_COLUMNS)
