"""The one formatter (oncoeval.core.format): a missing value reads "–", a boolean yes/no, a header
in words, on every surface; a model without a rank reads "no value", never "rank nan"."""

from __future__ import annotations

import pandas as pd

from oncoeval.core import format as fmt
from oncoeval.core.io import write_table
from oncoeval.report import summary

NAN = float("nan")


def test_headers_read_in_words():
    assert fmt.column_label("n_unscored") == "unscored"
    assert fmt.column_label("em_f1") == "EM F1"
    assert fmt.column_label("p_vs_best_adjusted") == "p vs best adjusted"
    assert fmt.column_label("rollout_scores: path_overlap") == "rollout scores: path overlap"
    assert fmt.column_label("model output") == "model output"  # words stay as they are


def test_markdown_twin_folds_intervals_and_shows_no_nan(tmp_path):
    df = pd.DataFrame(
        {
            "model": ["a", "b"],
            "f1": [0.5, NAN],
            "f1_ci_low": [0.4, NAN],
            "f1_ci_high": [0.6, NAN],
            "n_unscored": [0.0, 3.0],
            "descriptive": [True, False],
            "status": ["ok", None],
        }
    )
    write_table(df, tmp_path / "t.tsv", tmp_path / "t.md", title="T")
    md = (tmp_path / "t.md").read_text()
    header = md.splitlines()[2]
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "model", "F1 [95% CI]", "unscored", "descriptive", "status",
    ]  # fmt: skip
    assert "0.500 [0.400, 0.600]" in md and "| yes " in md and "| no " in md
    assert "nan" not in md.lower() and "None" not in md
    assert md.count("–") == 2  # b's F1 and status
    # The TSV keeps every column for machines.
    assert list(pd.read_csv(tmp_path / "t.tsv", sep="\t").columns) == list(df.columns)


def test_a_model_without_a_rank_reads_no_value(tmp_path):
    tables = tmp_path / "side_effects" / "tables"
    tables.mkdir(parents=True)
    pd.DataFrame(
        {
            "measure": ["F1"] * 3, "model": ["a", "b", "c"], "value": [0.9, 0.5, NAN],
            "n_units": [10, 10, 0], "n_unscored": [0, 0, 10], "rank": [1, 2, NAN],
            "best": ["a"] * 3, "standing": ["leader", "behind", "not separable from the leader at this n"],
        }
    ).to_csv(tables / "leaderboard.tsv", sep="\t", index=False)  # fmt: skip
    (row,) = summary.leader_rows(tmp_path, {"side_effects"})
    text = " ".join(str(v) for v in row.values())
    assert "c (no value)" in text and "nan" not in text
