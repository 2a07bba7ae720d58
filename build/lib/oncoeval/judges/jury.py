"""A jury: several judge models give one verdict each; the verdicts combine into one.

- ``majority`` (categorical verdicts such as -1/0/1 scores or yes/no): the most frequent readable
  verdict; a tie between the most frequent ones is unscored with the reason ``tie``.
- ``mean`` (numeric scores): the mean of the readable verdicts.

A juror whose verdict could not be read does not vote; with no readable verdict at all the item
is unscored with the jurors' reasons. Inter-judge agreement is Fleiss' κ (statsmodels) over the
items every juror scored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

COMBINE = ("majority", "mean")
TIE = "tie"


@dataclass(frozen=True)
class JuryVerdict:
    value: object  # the combined verdict, None when unscored
    reason: str  # why unscored ('' when scored)
    votes: tuple  # each juror's verdict (None: unreadable)

    @property
    def unanimous(self) -> bool:
        readable = [v for v in self.votes if v is not None]
        return len(readable) == len(self.votes) and len(set(readable)) == 1


def combine(votes, how: str = "majority", problems=()) -> JuryVerdict:
    """One item's verdict from its jurors' ``votes`` (None where a juror's reply was unreadable)."""
    if how not in COMBINE:
        raise ValueError(f"unknown jury combination {how!r}; known: {list(COMBINE)}")
    votes = tuple(votes)
    readable = [v for v in votes if v is not None]
    if not readable:
        why = "; ".join(p for p in problems if p) or "no readable verdict"
        return JuryVerdict(None, f"no juror gave a readable verdict ({why})", votes)
    if how == "mean":
        return JuryVerdict(float(np.mean(readable)), "", votes)
    counts = Counter(readable).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return JuryVerdict(None, TIE, votes)
    return JuryVerdict(counts[0][0], "", votes)


def fleiss_kappa(votes_by_item, classes) -> tuple[float, int]:
    """(Fleiss' κ, items used) over the items on which every juror gave a readable verdict."""
    from statsmodels.stats.inter_rater import fleiss_kappa as _fleiss

    index = {c: k for k, c in enumerate(classes)}
    rows = []
    for votes in votes_by_item:
        if any(v is None for v in votes):
            continue
        counts = np.zeros(len(classes), dtype=int)
        for v in votes:
            counts[index[v]] += 1
        rows.append(counts)
    if len(rows) < 2:
        return float("nan"), len(rows)
    table = np.vstack(rows)
    # Every item in one class: chance agreement is 1 and κ undefined.
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return float("nan"), len(rows)
    return float(_fleiss(table, method="fleiss")), len(rows)
