"""Rows of the report's review status: a table's estimates with their intervals, shared by
every review study (kept apart from the registry in ``studies`` so that the study modules
import it without a circle)."""

from __future__ import annotations

import pandas as pd


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def estimate_rows(df: pd.DataFrame, label: str, columns: dict, n_column: str = "n") -> list:
    """Status rows of a table's estimates: for each row and ``columns`` (column -> what it is)
    the value and its interval, or the reason a cell gives instead of a value."""
    out = []
    for _, r in df.iterrows():
        for column, what in columns.items():
            value = _number(r.get(column))
            out.append(
                {
                    "part": "corrected" if "corrected" in column else "judge",
                    "row": f"{r[label]}: {what}",
                    "value": value,
                    "ci_low": _number(r.get(f"{column}_ci_low")),
                    "ci_high": _number(r.get(f"{column}_ci_high")),
                    "n": r.get(n_column, ""),
                    "note": "" if value is not None else str(r.get(column, "")),
                }
            )
    return out
