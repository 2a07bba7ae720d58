"""Where a study's review labels stand, as the report shows it: ``review/review_status.tsv``.

Written by the ``review_status`` rule (rules/report.smk) for each enabled study with a review
plan (``results/{study}/review/plan.tsv``, drawn by ``make review``), so the report shows it
beside the judge's validation tables. One row per

- ``labels``: stratum of the judge's verdict: labels settled (``value``, from the last
  import's ``status.tsv``; 0 before any) against the plan's (``n_planned``) and the stratum's
  size (``n``);
- ``agreement``: the reviewers' agreement of the last import (``agreement.tsv``), with its
  interval;
- ``corrected`` / ``judge``: the study's estimates that the labels feed, with their intervals
  as the study's tables give them (Cancer-Myth: the corrected PCS and PCR per model, whose
  intervals resample the validation labels too; side effects: the matcher's sensitivity and
  specificity on the validation pairs).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import checks as oc
from ..core.io import write_table
from ..core.layout import ResultPaths
from .studies import review_study

STATUS = ResultPaths("{study}").review("review_status.tsv")
STATUS_MD = ResultPaths("{study}").review("review_status.md")
COLUMNS = ["part", "row", "value", "ci_low", "ci_high", "n", "n_planned", "note"]


def reviewed(study: str) -> bool:
    try:
        review_study(study)
    except SystemExit:
        return False
    return True


def targets(config: dict, root: Path = Path(".")) -> list[str]:
    """The status table of each enabled study with a review plan under ``root``."""
    return [
        STATUS.format(study=s)
        for s in oc.enabled_studies(config)
        if reviewed(s) and (root / ResultPaths(s).review("plan.tsv")).exists()
    ]


def status_table(study: str, files: dict) -> pd.DataFrame:
    """The rows (module docstring) from ``files``: the keys of :func:`inputs`."""
    spec = review_study(study)
    plan = pd.read_csv(files["plan"], sep="\t")
    per = plan.groupby("stratum").agg(
        n_stratum=("n_stratum", "first"), n_planned=("n_planned", "first")
    )
    labelled = {}
    if files.get("status"):
        got = pd.read_csv(files["status"], sep="\t")
        labelled = dict(zip(got["stratum"], got["n_labelled"], strict=True))
    rows = []
    for h, r in per.iterrows():
        got = int(labelled.get(h, 0))
        rows.append(
            {
                "part": "labels",
                "row": f"{spec.judge} verdict {h}",
                "value": got,
                "n": int(r["n_stratum"]),
                "n_planned": int(r["n_planned"]),
                "note": f"{got} of {int(r['n_planned'])} planned labels",
            }
        )
    if files.get("agreement"):
        a = pd.read_csv(files["agreement"], sep="\t", keep_default_na=False).iloc[0]
        measure = a["measure"] or "no item labelled by two reviewers"
        rows.append(
            {
                "part": "agreement",
                "row": f"{measure}, {a['reviewers']} reviewer(s)",
                "value": pd.to_numeric(a["value"], errors="coerce"),
                "ci_low": pd.to_numeric(a["ci_low"], errors="coerce"),
                "ci_high": pd.to_numeric(a["ci_high"], errors="coerce"),
                "n": a["n_items"],
                "note": f"{float(a['share_double_labelled']):.0%} of {a['items_labelled']} "
                f"labelled {spec.unit}s by two or more; {a['disagreements']} unsettled",
            }
        )
    else:
        rows.append({"part": "agreement", "row": "no labels imported yet", "note": ""})
    tables = {
        t: files.get(f"table_{k}")
        for k, t in enumerate(spec.status_tables)
        if files.get(f"table_{k}")
    }
    rows += spec.status_rows(tables)
    return pd.DataFrame(rows, columns=COLUMNS)


NOTE = (
    "labels: settled labels per stratum of the {judge}'s verdict (value) against the plan "
    "(n_planned) and the stratum's size (n); agreement: the last import's; corrected/judge: "
    "the study's estimates the labels feed, as its tables give them."
)
INTERVALS = (
    "Intervals (95%): agreement: percentile bootstrap over the items two or more reviewers "
    "labelled; corrected/judge: as the study's table states (corrected rates resample the "
    "validation labels within their strata too); labels: none (counts)."
)


def write_status(study: str, files: dict, out_tsv, out_md) -> pd.DataFrame:
    table = status_table(study, files)
    spec = review_study(study)
    write_table(
        table,
        out_tsv,
        out_md,
        f"{study}: where the review's labels stand",
        [NOTE.format(judge=spec.judge), INTERVALS],
    )
    return table
