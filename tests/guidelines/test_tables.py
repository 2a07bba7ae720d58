"""Tables that combine models, each on a hand-computed example named after the paper's quantity."""

import math

import numpy as np
import pandas as pd
import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.guidelines import compliance
from oncoeval.studies.guidelines.tables_consistency import (
    bin_centres,
    binned_accuracy,
    consistency_accuracy,
)
from oncoeval.studies.guidelines.tables_proxy import compliance_table

BOOT = BootstrapSettings(n_resamples=50, seed=0)


def scores_frame(model, consistency, accuracy):
    n = len(consistency)
    return pd.DataFrame(
        {
            "model": model,
            "patient_id": [f"p{i}" for i in range(n)],
            "note_set": "labelled",
            "self_path_overlap": consistency,
            "modal_path_overlap": accuracy,
            "path_overlap": accuracy,
            "self_treatment_share": consistency,
            "modal_treatment_correct": [float(a >= 0.5) for a in accuracy],
            "treatment_match": [float(a >= 0.5) for a in accuracy],
        }
    )


def test_table3_five_bins_and_pearson_r_by_hand(tmp_path):
    # model m1: consistency 0.2, 0.35, 0.58, 0.62, 0.95, 0.97 with modal-path accuracy
    # 0, 0.5, 0.5, 1, 1, 1.  Model m2 reaches consistency 1.0, so the centres (max over all
    # models) are linspace(1.0/5, 1.0, 5) = 0.2, 0.4, 0.6, 0.8, 1.0.
    # m1's nearest centres: 0.2 | 0.4 | 0.6, 0.6 | (none at 0.8) | 1.0, 1.0
    # bin means: 0 | 0.5 | 0.75 | - | 1.0 ; SEM of the 0.6 bin: sd(0.5, 1; ddof 1) / sqrt 2 = 0.25
    # r over the non-empty bins, x = (0.2, 0.4, 0.6, 1.0), y = (0, 0.5, 0.75, 1):
    #   mean x 0.55, mean y 0.5625; Sxy = 0.4125, Sxx = 0.35, Syy = 0.546875
    #   r = 0.4125 / sqrt(0.35 * 0.546875) = 0.4125 / 0.4375 = 33/35
    m1 = scores_frame("m1", [0.2, 0.35, 0.58, 0.62, 0.95, 0.97], [0, 0.5, 0.5, 1, 1, 1])
    m2 = scores_frame("m2", [0.35, 1.0, 1.0], [1, 0, 1])
    centres = bin_centres(1.0)
    assert centres == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    bins = binned_accuracy(m1["self_path_overlap"], m1["modal_path_overlap"], centres)
    assert bins["n"].tolist() == [1, 1, 2, 0, 2]
    assert bins["accuracy"].tolist()[:3] == [0.0, 0.5, 0.75] and bins["accuracy"][4] == 1.0
    assert bins["sem"][2] == pytest.approx(0.25)
    out = {k: tmp_path / f"{k}.x" for k in ("t", "tm", "b", "bm")}
    table = consistency_accuracy(
        pd.concat([m1, m2], ignore_index=True),
        BOOT,
        5,
        out["t"],
        out["tm"],
        out["b"],
        out["bm"],
        tmp_path / "fig.png",
    ).set_index("model")
    assert table.loc["m1", "path_overlap_r"] == pytest.approx(33 / 35)
    # m2: bins 0.4 (mean 1) and 1.0 (mean 0.5): two points, r = -1
    assert table.loc["m2", "path_overlap_r"] == pytest.approx(-1.0)
    # mean ± SEM over models: (33/35 - 1) / 2, SEM = sd(33/35, -1; ddof 1) / sqrt 2
    mean_row = table.loc["mean ± SEM"]
    assert mean_row["path_overlap_r"] == pytest.approx((33 / 35 - 1) / 2)
    assert mean_row["path_overlap_r_sem"] == pytest.approx(np.std([33 / 35, -1], ddof=1) / 2**0.5)
    # the per-note r stays as an extra column
    assert not math.isnan(table.loc["m1", "path_overlap_note_r"])
    figure_data = pd.read_csv(out["b"], sep="\t")
    assert set(figure_data["bin_centre"].round(6)) == {0.2, 0.4, 0.6, 0.8, 1.0}


NC = ("NOT_GUIDELINE_COMPLIANT",)
PATH = ("LUNG-1-1", "LUNG-1-3")


def test_compliance_confusion_table_by_hand(tmp_path):
    # positive = NOT_GUIDELINE_COMPLIANT.  Three non-compliant labels: two answered NC (TP),
    # one with a path (FN).  Seven path labels: one answered NC (FP), five with a path (TN),
    # one unparseable (unanswered, outside the cells).
    pairs = [(NC, NC)] * 2 + [(PATH, NC)] + [(NC, PATH)] + [(PATH, PATH)] * 5 + [(None, PATH)]
    cells = compliance.count_pairs(pairs)
    assert cells == {"tp": 2, "fn": 1, "fp": 1, "tn": 5, "unanswered": 1}
    # accuracy (2 + 5) / 9; precision 2 / (2 + 1); recall 2 / (2 + 1); F1 2PR / (P + R) = 2/3
    assert compliance.metrics(cells) == pytest.approx(
        {"accuracy": 7 / 9, "precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3}
    )
    expert = pd.DataFrame([{"model": "m1", **cells}])
    proxy = pd.DataFrame(
        [
            {"model": "m1", "proxy": "synthetic_structured", "metric": m, **zero}
            for m in ("path_overlap", "treatment_match")
            for zero in [{"tp": 0, "fn": 0, "fp": 0, "tn": 4, "unanswered": 0}]
        ]
    )
    compliance_table(proxy, expert, tmp_path / "c.tsv", tmp_path / "c.md")
    table = pd.read_csv(tmp_path / "c.tsv", sep="\t").set_index("benchmark")
    assert table.loc["expert", "f1"] == pytest.approx(2 / 3)
    # a benchmark without non-compliant labels has no recall: NaN, not 0 or 1
    assert table.loc["synthetic_structured", "tn"] == 4
    assert math.isnan(table.loc["synthetic_structured", "recall"])
