"""The synthetic chooser as a judge, against human labels of its cases.

The chooser sees a synthetic note with its target path and the generator's other prediction,
in both orders, and keeps the note only if it picks the target both times (``synthetic``).
Its verdict on a case of the benchmark (``synthetic/benchmark.tsv``) is ``target`` for
``chosen_both_orders`` and ``other`` for ``target_not_chosen`` (an unreadable choice has
none). The human labels (``chooser_validation``: item_id, target_path, other_path, human
``target`` | ``other``, inclusion_probability; written by ``make review-import``) say which
path fits the note. A label whose item is not a chooser case of this run, or whose paths are
not the case's, is left out and counted in the tables' note. The tables are the judges'
confusion, per-class sensitivity/specificity and Cohen's kappa
(oncoeval.judges.agreement.write_judges_tables). A label with an inclusion probability (drawn
by the review plan, whose strata are the chooser's verdicts sampled at different rates) weighs
1 / that probability, one without (a hand-filled row, or a file without the column) 1; a file
with none weighs every label alike.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ...core.inputs import read_table
from ...judges.agreement import write_judges_tables
from ...judges.correction import Validation
from ...stats.bootstrap import BootstrapSettings

CLASSES = ("target", "other")
VERDICTS = {"chosen_both_orders": "target", "target_not_chosen": "other"}
COLUMNS = ("item_id", "target_path", "other_path", "human")


def read_labels(path) -> pd.DataFrame:
    """The human labels, checked: InputError names the file, the row and what is wrong."""
    df = read_table(path, "\t", "chooser validation", comment="#", dtype=str, keep_default_na=False)
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise InputError(path, "header", f"missing columns {sorted(missing)}")
    for i, value in enumerate(df["human"]):
        if value.strip().lower() not in CLASSES:
            raise InputError(path, f"row {i + 2}", f"human must be target or other, not {value!r}")
    df["human"] = df["human"].str.strip().str.lower()
    probability = []
    for i, value in enumerate(df.get("inclusion_probability", [""] * len(df))):
        p = _number(value)
        if value.strip() and not 0 < p <= 1:
            raise InputError(
                path, f"row {i + 2}", f"inclusion_probability must be in (0, 1], not {value!r}"
            )
        probability.append(p)
    df["inclusion_probability"] = probability
    return df


def _number(value: str) -> float:
    try:
        return float(value) if value.strip() else math.nan
    except ValueError:
        return math.nan


def chooser_pairs(benchmark: pd.DataFrame, labels: pd.DataFrame):
    """(human labels, chooser verdicts) of the labels that name a chooser case of the run, as a
    Validation with their design weights (1 / inclusion probability, NaN without one; None when
    no label has one), and how many labels named none."""
    cases = benchmark[benchmark["decision"].isin(list(VERDICTS) + ["chooser_unparseable"])]
    cases = cases.set_index("item_id")
    truth, judged, probability, unmatched = [], [], [], 0
    for row in labels.itertuples():
        case = cases.loc[row.item_id] if row.item_id in cases.index else None
        if case is None or (case["target_path"], case["generator_path"]) != (
            row.target_path,
            row.other_path,
        ):
            unmatched += 1
            continue
        truth.append(row.human)
        judged.append(VERDICTS.get(case["decision"]))
        probability.append(row.inclusion_probability)
    p = np.asarray(probability, dtype=float)
    weights = None if np.isnan(p).all() else 1 / p
    return Validation(truth, judged, weights), unmatched


def write_chooser_validation(benchmark_path, labels_path, out: dict, settings: BootstrapSettings):
    benchmark = pd.read_csv(benchmark_path, sep="\t", dtype=str, keep_default_na=False)
    pairs, unmatched = chooser_pairs(benchmark, read_labels(labels_path))
    title = "CancerGUIDE chooser as a judge"
    if unmatched:
        title += f" ({unmatched} labels of {labels_path} name no chooser case of this run)"
    write_judges_tables({"chooser": pairs}, CLASSES, settings, out, title)
