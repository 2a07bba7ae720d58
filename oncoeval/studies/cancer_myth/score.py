"""Score: one model's judged records -> the per-question scores table (scores/{model}.tsv)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd

from ...core.io import read_jsonl

log = logging.getLogger(__name__)

# unit: the resampling unit (the question); cluster: the source record the question was
# written from (parse.cluster_of), resampled whole.
SCORE_COLUMNS = [
    "question_id", "unit", "cluster", "category", "from_model", "score", "parse_error",
    "verifier",
]  # fmt: skip
_DEFAULT_TO_QUESTION = ("unit", "cluster")


def score_frame(judged: list[dict], jury: list[str], combine: str) -> pd.DataFrame:
    """The scores table of judged records: a jury's rows keep every juror's vote (``votes``)
    and no reason; a jury's mean verdict stays a fraction, every other score an integer."""
    in_jury = len(jury) > 1
    rows = [
        {
            k: rec.get(k, rec["question_id"] if k in _DEFAULT_TO_QUESTION else None)
            for k in SCORE_COLUMNS
        }
        | {"retried": rec["retried"]}
        | (
            {"reason": "", "votes": json.dumps(rec["votes"])}
            if in_jury
            else {"reason": rec["reason"]}
        )
        for rec in judged
    ]
    df = pd.DataFrame(
        rows, columns=SCORE_COLUMNS + ["retried", "reason"] + (["votes"] if in_jury else [])
    )
    if not in_jury or combine == "majority":
        df["score"] = df["score"].astype("Int64")
    return df


def read_scores(path: str | os.PathLike) -> pd.DataFrame:
    df = pd.read_csv(
        path,
        sep="\t",
        dtype={"question_id": str, "unit": str, "cluster": str},
        keep_default_na=False,
    )
    df["score"] = pd.to_numeric(df["score"].replace("", None), errors="coerce")
    return df


def score(judged_path, jury, combine, scores_path) -> None:
    df = score_frame(read_jsonl(judged_path), list(jury), combine)
    Path(scores_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(scores_path, sep="\t", index=False, errors="backslashreplace")
    log.info(
        "%d scored, %d unscored (%d retried)",
        df["score"].notna().sum(),
        df["score"].isna().sum(),
        df["retried"].sum(),
    )
