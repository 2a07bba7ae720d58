"""toy_parse: the number in each answer; an answer without one is counted, never dropped."""

from __future__ import annotations

import re

import pandas as pd

PARSED_COLUMNS = ["id", "status", "answer"]


def parse_answer(text: str | None) -> int | None:
    """The first whole number of the answer, or None."""
    found = re.search(r"-?\d+", text or "")
    return int(found.group()) if found else None


def parsed_table(responses) -> pd.DataFrame:
    """One row per response: ``ok`` with its number, ``unparseable``, or ``failed`` (a failed
    call is never a score)."""
    rows = []
    for resp in responses:
        qid = resp.request_id.removeprefix("toy-")
        if resp.error is not None:
            rows.append({"id": qid, "status": "failed", "answer": None})
            continue
        number = parse_answer(resp.text)
        status = "ok" if number is not None else "unparseable"
        rows.append({"id": qid, "status": status, "answer": number})
    return pd.DataFrame(rows, columns=PARSED_COLUMNS).astype({"answer": "Int64"})
