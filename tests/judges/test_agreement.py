"""Judge validation tables, worked by hand on a small labelled set of our own."""

import numpy as np
import pytest

from oncoeval.judges.agreement import (
    confusion_table,
    kappa_with_ci,
    per_class_table,
    validation_summary,
)
from oncoeval.stats.bootstrap import BootstrapSettings

SETTINGS = BootstrapSettings(n_resamples=300, seed=0)
# A matcher validation set: does the reply mention the side effect? (None: unreadable verdict)
HUMAN = ["yes", "yes", "yes", "yes", "no", "no", "no", "no", "no", "yes"]
JUDGE = ["yes", "yes", "yes", "no", "no", "no", "no", "yes", "no", None]
CLASSES = ("no", "yes")


def test_confusion_table_counts_unreadable_verdicts_per_human_class():
    table = confusion_table(HUMAN, JUDGE, CLASSES, judge_name="matcher").set_index("human")
    assert table.loc["yes"].tolist() == [1, 3, 1]  # matcher no, yes, unscored
    assert table.loc["no"].tolist() == [4, 1, 0]


def test_per_class_sensitivity_and_specificity_by_hand():
    table = per_class_table(HUMAN, JUDGE, CLASSES, SETTINGS).set_index("class")
    # "yes": 3 of the 4 readable human yes found; 4 of 5 human no not called yes.
    assert table.loc["yes", "sensitivity"] == pytest.approx(3 / 4)
    assert table.loc["yes", "specificity"] == pytest.approx(4 / 5)
    assert table.loc["no", "sensitivity"] == pytest.approx(4 / 5)
    assert table.loc["yes", ["n_class", "n_other"]].tolist() == [4, 5]
    row = table.loc["yes"]
    assert row["sensitivity_ci_low"] <= 0.75 <= row["sensitivity_ci_high"]


def test_kappa_and_its_bootstrap_interval():
    # 9 readable pairs, 7 agree: p_o = 7/9; marginals human (5 no, 4 yes), judge (5, 4):
    # p_e = (25 + 16) / 81 = 41/81; kappa = (63/81 - 41/81) / (40/81) = 22/40.
    kappa, low, high = kappa_with_ci(HUMAN, JUDGE, CLASSES, SETTINGS)
    assert kappa == pytest.approx(22 / 40)
    assert low < kappa < high <= 1.0
    summary = validation_summary(HUMAN, JUDGE, CLASSES, SETTINGS, "matcher")
    assert (summary["n"], summary["n_unscored"]) == (9, 1)
    assert summary["exact_agreement"] == pytest.approx(7 / 9)
    assert summary["cohen_kappa_ci_low"] == pytest.approx(low)


def test_kappa_undefined_for_a_single_class():
    kappa, low, high = kappa_with_ci(["yes"] * 3, ["yes"] * 3, CLASSES, SETTINGS)
    assert np.isnan(kappa) and np.isnan(low) and np.isnan(high)
    with pytest.raises(ValueError, match="3 human labels but 2"):
        kappa_with_ci(["yes"] * 3, ["yes"] * 2, CLASSES, SETTINGS)


def test_write_validation_tables(tmp_path):
    import pandas as pd

    from oncoeval.judges.agreement import write_validation_tables

    out = {
        k: (tmp_path / f"{k}.tsv", tmp_path / f"{k}.md")
        for k in ("summary", "confusion", "per_class")
    }
    write_validation_tables(HUMAN, JUDGE, CLASSES, SETTINGS, "matcher", out, "Side effects")
    summary = pd.read_csv(out["summary"][0], sep="\t").iloc[0]
    assert summary["cohen_kappa"] == pytest.approx(22 / 40)
    assert (tmp_path / "per_class.md").read_text().startswith("# Side effects: sensitivity")
    confusion = pd.read_csv(out["confusion"][0], sep="\t").set_index("human")
    assert confusion.loc["yes", "judge_unscored"] == 1


def test_design_weights_of_one_give_the_unweighted_figures_and_kappa_is_sklearns():
    from sklearn.metrics import cohen_kappa_score

    from oncoeval.judges.agreement import weighted_estimates

    ones = weighted_estimates(HUMAN, JUDGE, CLASSES, [1.0] * len(HUMAN), SETTINGS)
    plain = validation_summary(HUMAN, JUDGE, CLASSES, SETTINGS)
    assert ones["exact_agreement"][0] == pytest.approx(plain["exact_agreement"])
    assert ones["cohen_kappa"][0] == pytest.approx(plain["cohen_kappa"])
    per_class = per_class_table(HUMAN, JUDGE, CLASSES, SETTINGS).set_index("class")
    assert ones[("sensitivity", 1)][0] == pytest.approx(per_class.loc["yes", "sensitivity"])
    assert ones[("specificity", 1)][0] == pytest.approx(per_class.loc["yes", "specificity"])
    # unequal weights: the unreadable last item is left out with its weight
    w = [2, 2, 1, 4, 1, 1, 3, 3, 1, 5]
    weighted = weighted_estimates(HUMAN, JUDGE, CLASSES, w, SETTINGS)
    expected = cohen_kappa_score(HUMAN[:-1], JUDGE[:-1], labels=list(CLASSES), sample_weight=w[:-1])
    assert weighted["cohen_kappa"][0] == pytest.approx(expected)
    # yes: human yes weights 2 + 2 + 1 + 4 = 9, of which the judge said yes on 5
    assert weighted[("sensitivity", 1)][0] == pytest.approx(5 / 9)
    low, high = weighted[("sensitivity", 1)][1:]
    assert low <= 5 / 9 <= high and low < high
