"""The review plan: Neyman allocation and half-widths by hand, inclusion probabilities, the seed."""

import numpy as np
import pandas as pd
import pytest

from oncoeval.review import plan
from oncoeval.review.__main__ import main
from tests.review.inputs import judged_root


def test_neyman_allocation_by_hand():
    # N = (100, 300), S = (0.5, 0.1): N*S = (50, 30), so 40 labels split 25 / 15.
    assert plan.neyman_allocation({"a": 100, "b": 300}, {"a": 0.5, "b": 0.1}, 40) == {
        "a": 25,
        "b": 15,
    }
    # A stratum smaller than its share is taken whole; the rest goes to the other.
    assert plan.neyman_allocation({"a": 10, "b": 300}, {"a": 0.5, "b": 0.01}, 40) == {
        "a": 10,
        "b": 30,
    }


def test_half_width_by_hand():
    sizes, sds, n = {"a": 100, "b": 300}, {"a": 0.5, "b": 0.1}, {"a": 25, "b": 15}
    # var = (1/4)^2 * 0.25/25 * 0.75 + (3/4)^2 * 0.01/15 * 0.95
    var = 0.0625 * 0.01 * 0.75 + 0.5625 * 0.01 / 15 * 0.95
    assert plan.half_width(sizes, sds, n, 0.95) == pytest.approx(1.959964 * np.sqrt(var))


def test_prior_then_labels_set_the_stratum_shares():
    shares = plan.stratum_positive_shares([-1, 0, 1], 1)
    assert shares == {-1: 0.2, 0: 0.2, 1: 0.8}
    # 5 labels of verdict 1, all positive: (5 * 0.8 + 5) / 10 = 0.9.
    shares = plan.stratum_positive_shares([-1, 0, 1], 1, [(1, True)] * 5)
    assert shares[1] == pytest.approx(0.9)


def test_plan_draws_each_stratum_at_its_inclusion_probability(tmp_path):
    root = judged_root(tmp_path)
    assert main(["page", "--root", str(root), "--labels", "40", "--seed", "3"]) == 0
    where = root / "results" / "cancer_myth" / "review"
    df = pd.read_csv(where / "plan.tsv", sep="\t")
    assert len(df) == 40 and df["item_id"].is_unique
    for _stratum, rows in df.groupby("stratum"):
        assert rows["inclusion_probability"].iloc[0] == pytest.approx(
            len(rows) / rows["n_stratum"].iloc[0]
        )
    assert dict(df.groupby("stratum")["n_stratum"].first()) == {-1: 18, 0: 30, 1: 72}
    # Equal prior spreads (0.8 and 0.2): allocation proportional to size, 40 * (18, 30, 72) / 120.
    assert dict(df.groupby("stratum").size()) == {-1: 6, 0: 10, 1: 24}
    table = pd.read_csv(where / "half_width.tsv", sep="\t")
    assert (table["half_width_planned"] <= table["half_width_random"] + 1e-12).all()
    assert table["half_width_planned"].is_monotonic_decreasing
    # The plan is kept; --replan with the same seed draws the same answers.
    first = df["item_id"].tolist()
    assert main(["page", "--root", str(root), "--labels", "40", "--seed", "3", "--replan"]) == 0
    assert pd.read_csv(where / "plan.tsv", sep="\t")["item_id"].tolist() == first


def test_a_kept_plan_of_other_judged_answers_is_flagged(tmp_path, capsys):
    root = judged_root(tmp_path)
    assert main(["page", "--root", str(root), "--labels", "20"]) == 0
    assert "draw a new plan" not in capsys.readouterr().out
    judged = root / "results" / "cancer_myth" / "judged" / "smollm2.jsonl"
    judged.write_text("".join(judged.read_text().splitlines(keepends=True)[:100]))
    assert main(["page", "--root", str(root), "--labels", "20"]) == 0
    out = capsys.readouterr().out
    assert "strata of sizes {-1: 18, 0: 30, 1: 72}" in out
    assert "now give {0: 28, 1: 72}: draw a new plan (--replan)" in out
