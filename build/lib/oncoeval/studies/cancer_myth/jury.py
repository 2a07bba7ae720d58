"""Cancer-Myth with a jury of verifiers: per-juror readings, combined verdicts, Fleiss' κ.

Each juror's reply is read exactly as a single verifier's is (oncoeval.studies.cancer_myth.
parse.judge: strict parse, one retry with its own reply quoted); the readable scores then
combine by ``jury_combine`` (oncoeval.judges.jury). ``votes`` keeps every juror's score.
"""

from __future__ import annotations

import json

import pandas as pd

from ...judges.jury import combine, fleiss_kappa
from .parse import judge

SCORES = (-1, 0, 1)


def jury_reading(rid, answer, firsts: list[dict], retries: list[dict], how: str) -> dict:
    """One item's combined record from every juror's first and retry replies."""
    readings = [
        judge(rid, answer, f.get(rid), r.get(rid)) for f, r in zip(firsts, retries, strict=True)
    ]
    verdict = combine(
        [x["score"] for x in readings], how, problems=[x["parse_error"] for x in readings]
    )
    return {
        "score": verdict.value,
        "parse_error": verdict.reason,
        "votes": list(verdict.votes),
        "retried": any(x["retried"] for x in readings),
        "jurors": readings,
    }


def jury_agreement_table(scores_by_model: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per evaluated model: jurors, Fleiss' κ over items all jurors scored, unanimity and ties."""
    rows = []
    for model, df in scores_by_model.items():
        if "votes" not in df.columns:
            rows.append({"model": model, "n_jurors": 1})
            continue
        votes = [tuple(json.loads(v)) for v in df["votes"]]
        kappa, used = fleiss_kappa(votes, SCORES)
        rows.append(
            {
                "model": model,
                "n_jurors": len(votes[0]) if votes else 0,
                "n_items": len(votes),
                "n_all_readable": used,
                "fleiss_kappa": kappa,
                "n_unanimous": sum(len(set(v)) == 1 and None not in v for v in votes),
                "n_tie": int((df["parse_error"] == "tie").sum()),
            }
        )
    columns = [
        "model",
        "n_jurors",
        "n_items",
        "n_all_readable",
        "fleiss_kappa",
        "n_unanimous",
        "n_tie",
    ]
    return pd.DataFrame(rows, columns=columns)
