"""Cancer-Myth with a jury of verifiers: how far the jurors agree (Fleiss' κ, unanimity, ties).

The jurors' verdicts are read and combined in the parse stage (``parse.jury_reading``); this
table reads the ``votes`` it kept of every juror.
"""

from __future__ import annotations

import json

import pandas as pd

from ...judges.jury import fleiss_kappa

SCORES = (-1, 0, 1)


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
