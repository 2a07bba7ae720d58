"""`make review-import`: reviewers' label files -> agreement, disagreements, human labels.

A file is refused, naming the file and the item, when it is not a label file of this study, or
a label names an item not in the plan, carries a value off the scale, or was given to another
answer than the plan's (its answer hash differs). Agreement is over the items two or more
reviewers labelled: Cohen's kappa (scikit-learn) for two reviewers, Krippendorff's alpha
(``krippendorff``, nominal) for more, each with a percentile bootstrap interval over items
(oncoeval.stats.bootstrap.bootstrap_stat_ci). Items whose labels differ are listed in
``disagreements.tsv`` and left out of the human labels until an adjudication file (the
adjudicate page's download) settles them.

Each labelled item enters the study's human-label file (``ReviewStudy.labels_file``:
Cancer-Myth's ``human_scores.json``, the side-effect matcher's ``matcher_validation.tsv``, the
chooser's ``chooser_validation.tsv``) with inclusion probability m_h / N_h: the labelled share
of its stratum. The page shows the plan's answers in a random order, so the
labelled part of a stratum is a random part of it; items left out as unsettled disagreements
are not (hard items disagree more), and the summary says how many there are.
"""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from ..core.errors import InputError
from ..core.io import write_table
from ..stats.bootstrap import BootstrapSettings, bootstrap_stat_ci
from . import studies
from .build import build as build_page
from .build import read_plan, review_dir
from .page import LABEL_FORMAT


def read_labels(path, study: str, plan_rows: pd.DataFrame, scale: list[int]) -> dict:
    """One reviewer's file: {reviewer, mode, labels: item_id -> (label, note)}; refused with
    InputError(path, item, problem) where it does not match the plan."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(path, None, f"not a readable JSON file ({err})") from None
    if not isinstance(doc, dict) or doc.get("format") != LABEL_FORMAT:
        raise InputError(path, None, f"not a review label file (format {LABEL_FORMAT})")
    if doc.get("study") != study:
        raise InputError(path, None, f"labels of study {doc.get('study')!r}, not {study!r}")
    hashes = dict(zip(plan_rows["item_id"], plan_rows["answer_sha256"], strict=True))
    records = doc.get("labels")
    if not isinstance(records, list):
        raise InputError(path, "labels", "expected a list of labels")
    labels = {}
    for k, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise InputError(path, f"label {k + 1}", "expected a JSON object")
        item = str(rec.get("item_id"))
        where = f"item {item}"
        if item not in hashes:
            raise InputError(path, where, "not in the review plan (unknown item id)")
        if rec.get("answer_sha256") != hashes[item]:
            raise InputError(path, where, "labelled a different answer than the plan's")
        if type(rec.get("label")) is not int or rec["label"] not in scale:
            raise InputError(
                path, where, f"label must be one of {scale} (got {rec.get('label')!r})"
            )
        labels[item] = (rec["label"], str(rec.get("note") or ""))
    reviewer = str(doc.get("reviewer") or Path(path).stem)
    return {"reviewer": reviewer, "mode": doc.get("mode", "label"), "labels": labels}


def agreement(table: pd.DataFrame, settings: BootstrapSettings) -> dict:
    """Agreement over the items (rows) every column's reviewer... at least two labelled."""
    both = table[table.notna().sum(axis=1) >= 2]
    n = len(both)
    if table.shape[1] < 2 or n == 0:
        return {"measure": "", "value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_items": n}
    data = both.to_numpy(dtype=float)
    if table.shape[1] == 2:
        measure = "cohen_kappa"
        pairs = both.dropna()
        a, b = pairs.iloc[:, 0].to_numpy(int), pairs.iloc[:, 1].to_numpy(int)

        def stat(x, y):
            if len(set(x) | set(y)) < 2:
                return np.nan
            return cohen_kappa_score(x, y)

        value = stat(a, b)
        low, high = bootstrap_stat_ci(
            lambda idx: np.array([stat(a[i], b[i]) for i in idx]), len(a), settings
        )
        n = len(a)
    else:
        measure = "krippendorff_alpha"

        def stat(rows):
            if len(np.unique(rows[~np.isnan(rows)])) < 2:
                return np.nan
            return krippendorff.alpha(reliability_data=rows.T, level_of_measurement="nominal")

        value = stat(data)
        low, high = bootstrap_stat_ci(
            lambda idx: np.array([stat(data[i]) for i in idx]), n, settings
        )
    return {"measure": measure, "value": value, "ci_low": low, "ci_high": high, "n_items": n}


def run_import(
    root: Path, study: str, files: list, settings: BootstrapSettings, out=None, config=None
) -> dict:
    """Merge the label ``files`` into the study's human labels (``out``; default
    ``results/{study}/review/{labels_file}``), carrying over the labels of the config's
    human-label file that this import does not settle."""
    if not files:
        raise SystemExit('review-import: no label files given (FILES="a.json b.json")')
    spec = studies.review_study(study)
    plan_rows, items = read_plan(root, study)
    scale = [o.value for o in spec.scale()]
    read = [read_labels(f, study, plan_rows, scale) for f in files]
    reviews = [r for r in read if r["mode"] != "adjudicate"]
    adjudications = [r for r in read if r["mode"] == "adjudicate"]
    names = [r["reviewer"] for r in reviews]
    if len(set(names)) != len(names):
        raise SystemExit(f"review-import: two files from the same reviewer ({', '.join(names)})")
    order = list(plan_rows["item_id"])
    table = pd.DataFrame(
        {r["reviewer"]: {i: r["labels"][i][0] for i in r["labels"]} for r in reviews},
        index=order,
        dtype=float,
    ).dropna(how="all")
    settled = {}
    for adj in adjudications:
        settled |= {i: lab for i, (lab, _) in adj["labels"].items()}
    final, disagreements = _settle(table, settled, reviews)
    agree = agreement(table, settings)
    n_double = int((table.notna().sum(axis=1) >= 2).sum())
    summary = {
        "study": study,
        "reviewers": len(reviews),
        "items_labelled": len(table),
        "items_double_labelled": n_double,
        "share_double_labelled": n_double / len(table) if len(table) else np.nan,
        **agree,
        "disagreements": len(disagreements),
        "settled_by_adjudication": sum(1 for i in settled if i in table.index),
        "human_labels": len(final),
    }
    where = review_dir(root, study)
    strata = plan_rows.set_index("item_id")
    labelled_per_stratum = pd.Series(
        [strata.loc[i, "stratum"] for i in final], dtype=object
    ).value_counts()
    # A record of an item this import settles is replaced by the import's.
    carried = [
        r for r in (spec.other_labels(config, root) if config else []) if r["id"] not in final
    ]
    records = list(carried)
    for item in order:
        if item not in final:
            continue
        h = strata.loc[item, "stratum"]
        p = labelled_per_stratum[h] / strata.loc[item, "n_stratum"]
        records.append(spec.human_record(items[item], final[item], p))
    out = Path(out) if out else where / spec.labels_file
    spec.write_labels(records, out)
    write_table(_status(plan_rows, labelled_per_stratum), where / "status.tsv")
    write_table(
        pd.DataFrame([summary]),
        where / "agreement.tsv",
        where / "agreement.md",
        f"{study}: reviewer agreement",
        [
            "Cohen's kappa for two reviewers, Krippendorff's alpha (nominal) for more, over the "
            "items two or more reviewers labelled; percentile bootstrap over those items "
            f"({settings.n_resamples} resamples, seed {settings.seed})."
        ],
    )
    columns = ["item_id"] + [f"label_{r}" for r in table.columns] + [f"note_{r}" for r in names]
    write_table(pd.DataFrame(disagreements, columns=columns), where / "disagreements.tsv")
    summary["carried_over"] = len(carried)
    summary["human_scores"] = str(out)
    return summary


def _settle(table: pd.DataFrame, settled: dict, reviews: list) -> tuple[dict, list[dict]]:
    """Each labelled item's final label (the adjudicator's, else the reviewers' when they
    agree) and the rows of the items the reviewers disagree on, with their notes."""
    final, disagreements = {}, []
    for item, row in table.iterrows():
        given = row.dropna().astype(int)
        if item in settled:
            final[item] = settled[item]
        elif given.nunique() == 1:
            final[item] = int(given.iloc[0])
        else:
            disagreements.append(
                {"item_id": item}
                | {f"label_{r}": ("" if np.isnan(row[r]) else int(row[r])) for r in table.columns}
                | {f"note_{r['reviewer']}": r["labels"].get(item, ("", ""))[1] for r in reviews}
            )
    return final, disagreements


def _status(plan_rows: pd.DataFrame, labelled_per_stratum: pd.Series) -> pd.DataFrame:
    """Per stratum: its size, the items planned and the items labelled."""
    status = (
        plan_rows.groupby("stratum")
        .agg(n_stratum=("n_stratum", "first"), n_planned=("n_planned", "first"))
        .reset_index()
    )
    status["n_labelled"] = [int(labelled_per_stratum.get(h, 0)) for h in status["stratum"]]
    return status


def adjudication_page(root: Path, config: dict, study: str, files: list, reviewer: str = ""):
    """The page in adjudicate mode: only the items the reviewers' files disagree on, each with
    every reviewer's label shown."""
    drawn, _ = read_plan(root, study)
    options = studies.review_study(study).scale()
    scale = [o.value for o in options]
    names = {o.value: o.name or str(o.value) for o in options}
    read = [read_labels(f, study, drawn, scale) for f in files]
    given: dict[str, list[str]] = {}
    values: dict[str, set] = {}
    for r in read:
        for item, (label, _) in r["labels"].items():
            given.setdefault(item, []).append(f"{r['reviewer']}: {names[label]}")
            values.setdefault(item, set()).add(label)
    others = {i: "; ".join(given[i]) for i in given if len(values[i]) > 1}
    return build_page(root, config, study, reviewer, mode="adjudicate", others=others)
