"""Score stage, per model: match tasks -> matches (the configured matcher) -> scores and overlaps.

Matching is the first half of scoring (the ``side_effects_match`` rule); the llm matcher's judge
requests are written by the requests stage from the same match tasks.

File schemas (JSONL one object per line, TSV with a header):

- ``parsed/{model}.jsonl``: request_id, profile_id, variant, regime, site, items, n_non_list_lines,
  n_duplicates, status (ok | empty | error), reason.
- ``matches/{model}.jsonl``: key, kind (reference | overlap), profile_id, variant, regime, site,
  matcher, left, right, pairs ([[i, j], ...]), matched ([[left text, right text], ...]), status,
  reason.
- ``scores/{model}.tsv`` and ``overlap/{model}.tsv``: the output contract (see SCORE_COLUMNS and
  OVERLAP_COLUMNS).
"""

from __future__ import annotations

import logging
import math

import pandas as pd

from ...core.io import read_jsonl, write_jsonl, write_table
from ...core.records import read_responses
from .matchers import LLMMatcher, MatchResult, MatchTask, make_matcher
from .metrics import (
    CELL_COLUMNS,
    POOLED_COLUMNS,
    STRATUM_COLUMNS,
    overlap_ratio,
    score_response,
)
from .reference import site_items, vocabulary

log = logging.getLogger(__name__)

# unit: the resampling unit (one profile's list of one variant under one regime); cluster: the
# patient profile, whose variants and regimes are resampled together.
SCORE_COLUMNS = [
    "unit",
    "cluster",
    "profile_id",
    "variant",
    "regime",
    "site",
    "n_pred",
    "n_ref",
    "n_matched",
    "precision",
    "recall",
    "f1",
    "n_non_list_lines",
    *STRATUM_COLUMNS,
    *POOLED_COLUMNS,
    *CELL_COLUMNS,
    "status",
    "reason",
]
OVERLAP_COLUMNS = [
    "profile_id",
    "regime",
    "n_base",
    "n_specified",
    "n_common",
    "overlap",
    "status",
    "reason",
]


def match_tasks(parsed: list[dict], reference: pd.DataFrame) -> list[tuple[dict, MatchTask]]:
    """(description, task) for every list against its site's reference, and every base/specified
    pair of one profile and regime. Lists that could not be parsed get no task."""
    tasks = []
    refs = {
        site: list(site_items(reference, site)["side_effect"])
        for site in reference["site"].unique()
    }
    by_pair: dict[tuple[str, str], dict[str, dict]] = {}
    for row in parsed:
        if row["status"] == "error":
            continue
        desc = {k: row[k] for k in ("profile_id", "variant", "regime", "site")}
        key = f"ref|{row['profile_id']}|{row['variant']}|{row['regime']}"
        tasks.append(
            (
                {"key": key, "kind": "reference", **desc},
                MatchTask(key, row["items"], refs[row["site"]]),
            )
        )
        by_pair.setdefault((row["profile_id"], row["regime"]), {})[row["variant"]] = row
    for (pid, regime), variants in sorted(by_pair.items()):
        if {"base", "specified"} <= set(variants):
            base, spec = variants["base"], variants["specified"]
            key = f"ovl|{pid}|{regime}"
            desc = {
                "key": key,
                "kind": "overlap",
                "profile_id": pid,
                "variant": None,
                "regime": regime,
                "site": spec["site"],
            }
            tasks.append((desc, MatchTask(key, base["items"], spec["items"])))
    return tasks


def write_matches(out_path, tasks, results: dict[str, MatchResult], matcher: str) -> None:
    rows = []
    for desc, task in tasks:
        res = results[task.key]
        rows.append(
            {
                **desc,
                "matcher": matcher,
                "left": task.left,
                "right": task.right,
                "pairs": [list(p) for p in res.pairs],
                "matched": [[task.left[i], task.right[j]] for i, j in res.pairs],
                "status": res.status,
                "reason": res.reason,
            }
        )
    write_jsonl(out_path, rows)


def _match_status(match: dict | None) -> tuple[str, str | None] | None:
    """(status, reason) when a match record is missing or unusable, else None."""
    if match is None:
        return "match_missing", "no match record"
    if match["status"] != "ok":
        return f"match_{match['status']}", match["reason"]
    return None


def unit_id(profile_id, variant, regime) -> str:
    """The resampling unit's id: one profile's list of one variant under one regime."""
    return f"{profile_id}/{variant}/{regime}"


def score_rows(parsed: list[dict], by_key: dict, reference: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for row in parsed:
        site_ref = site_items(reference, row["site"])
        status, reason = row["status"], row["reason"]
        match = by_key.get(f"ref|{row['profile_id']}|{row['variant']}|{row['regime']}")
        if status != "error" and _match_status(match):
            status, reason = _match_status(match)
        elif status != "error" and match.get(
            "reason"
        ):  # a note of the matcher, e.g. a dropped pair
            reason = "; ".join(r for r in (reason, f"matcher: {match['reason']}") if r)
        if status in ("ok", "empty"):
            pairs = [tuple(p) for p in match["pairs"]]
            metrics = score_response(len(row["items"]), site_ref, pairs)
        else:  # unscorable: counts kept, metrics NaN
            metrics = {"n_pred": len(row["items"]), "n_ref": len(site_ref)}
        rows.append(
            {
                "unit": unit_id(row["profile_id"], row["variant"], row["regime"]),
                "cluster": row["profile_id"],
                **{k: row[k] for k in ("profile_id", "variant", "regime", "site")},
                **metrics,
                "n_non_list_lines": row["n_non_list_lines"],
                "status": status,
                "reason": reason,
            }
        )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def overlap_rows(parsed: list[dict], by_key: dict) -> pd.DataFrame:
    pairs: dict[tuple[str, str], dict[str, dict]] = {}
    for row in parsed:
        pairs.setdefault((row["profile_id"], row["regime"]), {})[row["variant"]] = row
    rows = []
    for (pid, regime), variants in sorted(pairs.items()):
        base, spec = variants.get("base"), variants.get("specified")
        row = {
            "profile_id": pid,
            "regime": regime,
            "n_base": len(base["items"]) if base else 0,
            "n_specified": len(spec["items"]) if spec else 0,
            "n_common": math.nan,
            "overlap": math.nan,
            "status": "ok",
            "reason": None,
        }
        match = by_key.get(f"ovl|{pid}|{regime}")
        if base is None or spec is None or "error" in (base["status"], spec["status"]):
            row.update(status="error", reason="a response of the pair failed")
        elif _match_status(match):
            row["status"], row["reason"] = _match_status(match)
        else:
            row["n_common"] = len(match["pairs"])
            if match.get("reason"):
                row["reason"] = f"matcher: {match['reason']}"
            row["overlap"] = overlap_ratio(row["n_base"], row["n_specified"], row["n_common"])
            if math.isnan(row["overlap"]):
                row.update(status="empty", reason="both lists empty")
        rows.append(row)
    return pd.DataFrame(rows, columns=OVERLAP_COLUMNS)


def score(
    parsed: list[dict], matches: list[dict], reference: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The scores and overlap tables of one model."""
    by_key = {m["key"]: m for m in matches}
    return score_rows(parsed, by_key, reference), overlap_rows(parsed, by_key)


def read_reference(path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def match_file(
    parsed_path, reference_path, settings, out_path, synonyms_path=None, judged_path=None
) -> None:
    reference = read_reference(reference_path)
    tasks = match_tasks(read_jsonl(parsed_path), reference)
    # Two distinct terms of this vocabulary are never paired with each other.
    vocab = vocabulary(reference)
    method = settings["method"]
    plain = [t for _, t in tasks]
    if method == "llm":
        asked = [t for t in plain if t.left and t.right]
        results = LLMMatcher("").read(asked, read_responses(judged_path), vocab)
        results.update({t.key: MatchResult() for t in plain if not (t.left and t.right)})
    else:
        matcher = make_matcher(method, settings, synonyms_path=synonyms_path)
        results = matcher.run(plain, vocab)
    write_matches(out_path, tasks, results, method)
    bad = sum(r.status != "ok" for r in results.values())
    log.info(
        "%s matcher: %d tasks, %d not usable (unparseable, truncated, contradictory or failed "
        "judge answers)",
        method,
        len(plain),
        bad,
    )


def score_files(parsed_path, matches_path, reference_path, scores_path, overlap_path) -> None:
    scores, overlap = score(
        read_jsonl(parsed_path), read_jsonl(matches_path), read_reference(reference_path)
    )
    write_table(scores, scores_path)
    write_table(overlap, overlap_path)
    log.info("scores: %s", scores["status"].value_counts().to_dict())
