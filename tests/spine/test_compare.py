"""Paired comparisons, leaderboards and intervals (oncoeval.stats.compare), each checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oncoeval.stats import compare
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.stats.compare import Clustered, CompareSettings, Measure
from oncoeval.studies.cancer_myth import workflow as cancer_myth
from oncoeval.workflow import comparison

SETTINGS = CompareSettings(bootstrap=BootstrapSettings(n_resamples=2000, seed=0))


def test_exact_mcnemar_on_a_two_by_two_table_by_hand():
    # a right / b wrong: 2; a wrong / b right: 6; concordant pairs do not count.
    a = [1, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [0, 0, 1, 1, 1, 1, 1, 1, 1, 0]
    # two-sided binomial, 2 of 8 discordant: 2 * (C(8,0) + C(8,1) + C(8,2)) / 2^8 = 74/256
    assert compare.mcnemar_exact(a, b) == pytest.approx(74 / 256)
    p, test = compare.paired_test(a, b, None, "binary", SETTINGS)
    assert (p, test) == (pytest.approx(74 / 256), "mcnemar")


def test_sign_flip_permutation_on_six_units_by_hand():
    # differences 1, 1, 1, 1, 1, -1: sum 4. Of the 2^6 = 64 sign patterns, k negatives give
    # sum 6 - 2k; |6 - 2k| >= 4 for k = 0, 1, 5, 6: 1 + 6 + 6 + 1 = 14 patterns.
    diffs = Clustered.of([1, 1, 1, 1, 1, -1])
    assert compare.sign_flip_p(diffs, 9999, 0) == pytest.approx(14 / 64)
    # all six positive: only the all-positive and all-negative patterns reach |sum| = 21
    assert compare.sign_flip_p(Clustered.of([1, 2, 3, 4, 5, 6]), 9999, 0) == pytest.approx(2 / 64)
    p, test = compare.paired_test([2, 2, 2, 2, 2, 0], [1, 1, 1, 1, 1, 1], None, "mean", SETTINGS)
    assert (p, test) == (pytest.approx(14 / 64), "sign_flip")


def test_bonferroni_family_of_the_primary_measure_decides_at_alpha_over_m():
    # three models: m = 3 pairs on the primary measure, decided at 0.05 / 3 with intervals at
    # 1 - 0.05 / 3; the other measure's rows are descriptive (m = 1, 95%)
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.7, size=20)
    scores = {
        k: pd.concat([_long("P", v), _long("D", v)])
        for k, v in (
            (k, np.clip(base + shift + rng.normal(0, 0.05, 20), 0, 1))
            for k, shift in (("a", 0.2), ("b", 0.1), ("c", 0.0))
        )
    }
    measures = [Measure("P", primary=True), Measure("D")]
    table = compare.comparison_table(scores, measures, SETTINGS)
    primary = table[table["measure"] == "P"]
    assert primary["family"].eq("primary").all() and primary["m"].eq(3).all()
    assert primary["ci_level"].to_numpy() == pytest.approx([1 - 0.05 / 3] * 3)
    assert primary["p_adjusted"].to_numpy() == pytest.approx(
        np.minimum(1, 3 * primary["p_value"].to_numpy())
    )
    assert primary["adjustment"].iloc[0].startswith("Bonferroni: alpha 0.05 / 3")
    descriptive = table[table["measure"] == "D"]
    assert descriptive["family"].eq("descriptive").all() and descriptive["m"].eq(1).all()
    assert descriptive["ci_level"].to_numpy() == pytest.approx([0.95] * 3)
    # the same differences: the adjusted interval is the wider one
    width = (table["diff_ci_high"] - table["diff_ci_low"]).to_numpy()
    assert (width[:3] > width[3:]).all()


def test_one_cluster_resample_takes_whole_clusters():
    # clusters A (units 1, 3), B (unit 5), C (units 0, 0, 2)
    data = Clustered.of([1, 3, 5, 0, 0, 2], ["A", "A", "B", "C", "C", "C"])
    assert (data.n_units, data.n_clusters, data.singletons) == (6, 3, False)
    # draw A, C, C: units 1, 3, 0, 0, 2, 0, 0, 2 -> 8 / 8
    assert data.resampled_mean([[0, 2, 2]]) == pytest.approx([(1 + 3 + 2 * 2) / 8])
    # draw B, B, A: 5, 5, 1, 3 -> 14 / 4
    assert data.resampled_mean([1, 1, 0]) == pytest.approx(14 / 4)
    # cluster-robust SE: residuals from the mean 11/6 summed per cluster, G/(G-1) factor
    m = 11 / 6
    resid = [1 + 3 - 2 * m, 5 - m, 2 - 3 * m]
    assert data.standard_error() == pytest.approx(math.sqrt(1.5 * sum(r * r for r in resid)) / 6)


def test_clustered_paired_test_flips_whole_clusters():
    # two clusters of three units with the same difference: 2^2 = 4 patterns, 2 extreme
    p, test = compare.paired_test([1] * 6, [0] * 6, list("aaabbb"), "binary", SETTINGS)
    assert (p, test) == (pytest.approx(2 / 4), "cluster_sign_flip")


def _long(measure, values, clusters=None):
    n = len(values)
    return pd.DataFrame(
        {
            "measure": measure,
            "unit": [f"u{i}" for i in range(n)],
            "cluster": clusters or [f"u{i}" for i in range(n)],
            "value": values,
        }
    )


def test_identical_models_differ_by_zero_with_p_one_and_are_not_separable_or_equivalent():
    rng = np.random.default_rng(1)
    values = rng.uniform(size=20)
    scores = {"a": _long("m", values), "b": _long("m", values)}
    table = compare.comparison_table(scores, [Measure("m", primary=True)], SETTINGS)
    row = table.iloc[0]
    assert (row["diff"], row["p_value"], row["p_adjusted"]) == (0, 1, 1)
    # no spread in the differences: a Wilson bound on 0 of 20 clusters, not a point
    q = 1.959964
    u = q * q / (20 + q * q)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((-u, u), abs=1e-5)
    assert row["verdict"] == compare.NOT_SEPARABLE  # +-0.16 is wider than the margin 0.05
    board = compare.leaderboard(scores, [Measure("m", primary=True)], table, SETTINGS)
    assert board["standing"].tolist() == ["leader", "not separable from the leader at this n"]
    assert board["rank"].tolist() == [1, 1]
    # with a margin of 0.2 the same interval says equivalent
    wide = CompareSettings(margins=(("m", 0.2),), bootstrap=SETTINGS.bootstrap)
    row = compare.comparison_table(scores, [Measure("m", primary=True)], wide).iloc[0]
    assert row["verdict"] == "equivalent within ±0.2"


def test_better_on_every_unit_of_thirty_is_significantly_better_and_the_others_behind():
    rng = np.random.default_rng(2)
    b = rng.uniform(0, 0.8, size=30)
    scores = {"a": _long("m", b + 0.1), "b": _long("m", b), "c": _long("m", b + 0.05)}
    measures = [Measure("m", primary=True)]
    table = compare.comparison_table(scores, measures, SETTINGS)
    ab = table.set_index(["model_a", "model_b"]).loc[("a", "b")]
    assert ab["diff"] == pytest.approx(0.1)
    assert ab["p_value"] < 0.001 and ab["significant"] and ab["verdict"] == "a ahead"
    assert ab["diff_ci_low"] > 0
    board = compare.leaderboard(scores, measures, table, SETTINGS).set_index("model")
    assert board["best"].unique().tolist() == ["a"]
    assert board.loc["a", "rank"] == 1 and board.loc["a", "standing"] == "leader"
    assert board.loc["b", "standing"] == "behind the leader" and board.loc["b", "rank"] == 3
    # better on every unit of 30 in a binary outcome too: exact McNemar, 30 of 30 discordant
    binary = {"a": _long("r", [1.0] * 30), "b": _long("r", [0.0] * 30)}
    row = compare.comparison_table(binary, [Measure("r", "binary")], SETTINGS).iloc[0]
    assert row["test"].startswith("exact McNemar")
    assert row["p_value"] == pytest.approx(2 * 0.5**30)
    # Clopper-Pearson at 95%: the split 30 of 30 (>= 0.884) times the discordant share
    # 30 of 30 (>= 0.884): 0.884 x (2 x 0.884 - 1)
    assert row["diff_ci_low"] == pytest.approx(0.8843 * (2 * 0.8843 - 1), abs=1e-3)
    assert row["diff_ci_high"] == 1.0


def test_leaderboard_counts_unscored_units_and_uses_wilson_for_shares():
    scores = {"a": _long("r", [1, 0, 1, 1, np.nan]), "b": _long("r", [0, 0, 1, np.nan, np.nan])}
    table = compare.comparison_table(scores, [Measure("r", "binary")], SETTINGS)
    assert table.iloc[0]["n_units"] == 3  # units both were scored on
    board = compare.leaderboard(scores, [Measure("r", "binary")], table, SETTINGS)
    a = board.set_index("model").loc["a"]
    assert (a["n_units"], a["n_unscored"], a["value"]) == (4, 1, 0.75)
    assert a["interval"].startswith("Wilson score interval")
    # Wilson 95%: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), p = 3/4, n = 4,
    # with z the t quantile at n - 1 = 3 df
    z, n, p = 3.182446, 4, 0.75
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-5)


def test_minimum_detectable_difference_is_where_the_rows_own_test_reaches_its_power():
    from scipy import stats

    d = np.array([0.1, -0.1] * 10)  # SD of the differences 0.1026, n 20
    diffs = Clustered.of(d)
    # by default the interval is the row's own (sign-flip inverted at alpha / m), as the table's
    row = compare.compare_arrays(0.5 + d / 2, 0.5 - d / 2, m=3, settings=SETTINGS)
    assert row["mdd"] == pytest.approx(compare.minimum_detectable_difference(diffs, SETTINGS, 3))
    # the adjustment is the decision's: alpha / 3 needs a larger difference than alpha
    assert compare.minimum_detectable_difference(
        diffs, SETTINGS, 3
    ) > compare.minimum_detectable_difference(diffs, SETTINGS, 1)
    # many units of a smooth score: the textbook (z_{1 - alpha/2m} + z_power) x SE
    x = np.random.default_rng(1).normal(0.05, 0.2, 400)
    many = Clustered.of(x)
    z = stats.norm.ppf(1 - 0.05 / 6) + stats.norm.ppf(0.8)
    assert compare.minimum_detectable_difference(many, SETTINGS, 3) == pytest.approx(
        z * many.standard_error(), rel=0.05
    )
    # 5 clusters and 3 comparisons: 3 x 2 / 32 > 0.05, no mdd whatever the data
    assert math.isnan(
        compare.minimum_detectable_difference(Clustered.of(d[:5]), SETTINGS, 3, (-1, 1))
    )


def test_cancer_myth_comparison_gives_the_old_pairwise_numbers_for_the_same_method(tmp_path):
    """The former pairwise table: paired percentile bootstrap of the PCS difference over
    questions and exact McNemar on PCR; the generic table with interval=percentile agrees."""
    rows = {
        "a": [1, 1, 1, 1, 1, 1, 0, None],
        "b": [-1, -1, 0, -1, 0, -1, 0, 1],
        "c": [1, 1, 1, 1, 1, 1, 0, 1],
    }
    paths = {}
    for model, values in rows.items():
        df = pd.DataFrame(
            {
                "question_id": [str(i) for i in range(8)],
                "score": ["" if v is None else v for v in values],
            }
        )
        paths[model] = tmp_path / f"{model}.tsv"
        df.to_csv(paths[model], sep="\t", index=False)
    scores = comparison.study_unit_scores("cancer_myth", paths, {})
    measures = comparison.study_measures("cancer_myth")
    assert [m.name for m in measures] == ["PCS (raw judge verdicts)", "PCR (raw judge verdicts)"]
    # declared: PCS a score on [-1, 1], the primary measure; PCR a 0/1 outcome
    assert [(m.kind, m.value_range, m.primary) for m in measures] == [
        ("mean", (-1.0, 1.0), True),
        ("binary", (0.0, 1.0), False),
    ]
    table = compare.comparison_table(scores, measures, SETTINGS)
    pcs = table[table["measure"] == measures[0].name].set_index(["model_a", "model_b"])
    pcr = table[table["measure"] == measures[1].name].set_index(["model_a", "model_b"])
    ab = pcs.loc[("a", "b")]
    assert ab["n_units"] == 7  # question 7 is unscored for a
    assert ab["diff"] == pytest.approx((6 - (-4)) / 7)
    # 7 questions, differences 2 2 1 2 1 2 0: of 2^7 flips only the all-kept and all-flipped
    # six non-zero ones reach |sum| 10, whatever the zero's sign: p = 4 / 128, m = 3 pairs
    assert ab["p_value"] == pytest.approx(4 / 128)
    assert ab["p_adjusted"] == pytest.approx(12 / 128)
    assert not ab["significant"] and ab["diff_ci_low"] <= 0 <= ab["diff_ci_high"]
    assert pcr.loc[("a", "b"), "p_value"] == pytest.approx(2 * 0.5**6)  # 6 vs 0 discordant
    assert pcr.loc[("a", "c"), "p_value"] == 1.0
    assert pcr["family"].eq("descriptive").all() and pcs["family"].eq("primary").all()


def test_hand_written_questions_are_each_their_own_cluster():
    from oncoeval.studies.cancer_myth.parse import cluster_of

    assert cluster_of({"question_id": "q1", "source_row": 4, "source_type": "myth"}) == "myth:4"
    assert cluster_of({"question_id": "q2", "source_row": -1}) == "question:q2"
    assert cluster_of({"question_id": "q3", "source_row": None}) == "question:q3"
    assert cancer_myth.STUDY.resampling.unit == "question"


def test_summary_names_the_leader_and_the_others_standing_before_ranks(tmp_path):
    from oncoeval.report import summary, summary_terminal

    rng = np.random.default_rng(4)
    base = rng.uniform(0, 0.8, size=21)
    scores = {
        "lead": _long("F1", base + 0.1),
        "close": _long("F1", base + 0.1 - rng.normal(0, 0.01, 21)),
        "weak": _long("F1", base),
    }
    measures = [Measure("F1", primary=True)]
    table = compare.comparison_table(scores, measures, SETTINGS)
    board = compare.leaderboard(scores, measures, table, SETTINGS)
    tables = tmp_path / "results" / "side_effects" / "tables"
    tables.mkdir(parents=True)
    table.to_csv(tables / "model_comparison.tsv", sep="\t", index=False)
    board.to_csv(tables / "leaderboard.tsv", sep="\t", index=False)
    (row,) = summary.leader_rows(tmp_path / "results", {"side_effects"})
    leader = board["best"].iloc[0]
    other = "close" if leader == "lead" else "lead"
    assert row["leader"] == leader
    # 0.01 noise on 21 profiles: the interval lies inside +-0.05
    assert row["equivalent or not separable"] == f"{other} (equivalent within ±0.05)"
    assert row["behind the leader"] == "weak (rank 3)"
    mdd = pd.to_numeric(table["mdd"]).median()
    assert row["detectable difference"] == f"about {mdd:.3g} with 21 units"
    # the terminal summary prints the same rows (it reads results/summary.tsv for the studies)
    headline = {"study": "side_effects", "model": leader, "measure": "F1", "value": 0.5}
    pd.DataFrame([headline], columns=summary.SUMMARY_COLUMNS).to_csv(
        tmp_path / "results" / "summary.tsv", sep="\t", index=False
    )
    text = summary_terminal.terminal_summary(tmp_path)
    assert text.index("equivalent") < text.index("behind: weak") and "tied" not in text


def _cm_scores(path, ones, n=30):
    scores = [1] * ones + [-1] * (n - ones)
    pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(n)],
            "cluster": [f"myth:{i // 2}" for i in range(n)],  # two questions per myth
            "score": scores,
        }
    ).to_csv(path, sep="\t", index=False)
    return path


def test_judge_corrected_rates_are_compared_corrected_to_corrected(tmp_path):
    from oncoeval.studies.cancer_myth.aggregate import corrected_rows

    # validation: human 1 -> verifier 1 on 8 of 10 (sensitivity 0.8); human -1 -> verifier -1
    # on 9 of 10 (specificity 0.9)
    pd.DataFrame(
        {
            "id": [f"v{i}" for i in range(20)],
            "human_score": [1] * 10 + [-1] * 10,
            "verifier_score": [1] * 8 + [0] * 2 + [-1] * 9 + [1],
            "parse_error": "",
        }
    ).to_csv(tmp_path / "pairs.tsv", sep="\t", index=False)
    paths = {
        "a": _cm_scores(tmp_path / "a.tsv", 18),  # observed PCR 0.6
        "b": _cm_scores(tmp_path / "b.tsv", 9),  # observed PCR 0.3
        "twin": _cm_scores(tmp_path / "twin.tsv", 18),
    }
    measures = {"pcs_corrected": "PCS corr", "pcr_corrected": "PCR corr"}
    settings = CompareSettings(bootstrap=BootstrapSettings(n_resamples=500, seed=0))
    rows, values, notes = corrected_rows(paths, tmp_path / "pairs.tsv", {}, settings, measures)
    table = pd.DataFrame(rows).set_index(["measure", "model_a", "model_b"])
    ab = table.loc[("PCR corr", "a", "b")]
    # Rogan-Gladen: (q + spec - 1) / (sens + spec - 1): (0.6 - 0.1) / 0.7 and (0.3 - 0.1) / 0.7
    assert (ab["value_a"], ab["value_b"]) == pytest.approx((5 / 7, 2 / 7))
    assert ab["diff"] == pytest.approx(3 / 7)
    assert ab["diff_ci_low"] > 0 and ab["p_value"] < 0.05
    assert (ab["n_units"], ab["n_clusters"]) == (30, 15)
    # the same verdicts corrected with the same resampled matrices: no difference at all
    twin = table.loc[("PCR corr", "a", "twin")]
    assert (twin["diff"], twin["diff_ci_low"], twin["diff_ci_high"], twin["p_value"]) == (
        0,
        0,
        0,
        1,
    )
    # PCS needs labels of every score: human 0 is missing, so the row gives the reason
    assert "fewer than 5 validation labels" in table.loc[("PCS corr", "a", "b"), "test"]
    board = pd.DataFrame(values).set_index(["measure", "model"])
    assert board.loc[("PCR corr", "a"), "value"] == pytest.approx(5 / 7)
    # a model judged by its own verifier is neither corrected nor compared
    rows, values, _ = corrected_rows(
        paths, tmp_path / "pairs.tsv", {"own_verifier": {"b": "stored"}}, settings, measures
    )
    ab = pd.DataFrame(rows).set_index(["measure", "model_a", "model_b"]).loc[("PCR corr", "a", "b")]
    assert ab["test"].startswith("not compared: b is judged by stored")
    assert "Corrected rows" in notes[0]


def test_the_comparison_page_states_the_minimum_detectable_difference():
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 0.8, size=21)
    noisy = np.clip(base + rng.normal(0, 0.1, 21), 0, 1)
    scores = {"a": _long("F1", noisy), "b": _long("F1", base)}
    table = compare.comparison_table(scores, [Measure("F1", primary=True)], SETTINGS)
    (sentence,) = compare.mdd_sentences(table, SETTINGS)
    assert sentence.startswith("F1: with 21 units this study tells apart differences of about")
    assert f"{table['mdd'].iloc[0]:.3g}" in sentence


def test_units_without_a_cluster_are_each_their_own():
    data = Clustered.of([1, 2, 3, 4], ["m1", "m1", None, float("nan")])
    assert data.n_clusters == 3  # m1, and the two units without one apart


def test_side_effects_units_are_specified_profiles_per_headline_regime(tmp_path):
    from oncoeval.studies.side_effects import workflow

    rows = [
        {"profile_id": p, "variant": v, "regime": r, "f1": f1}
        for p, f1 in (("p1", 0.5), ("p2", float("nan")))
        for v in ("base", "specified")
        for r in ("ff", "ff_lsc", "grounded", "grounded_lsc")
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "s.tsv", sep="\t", index=False)
    units = workflow.unit_scores(tmp_path / "s.tsv", {})
    ff = units[units["measure"] == "F1, free-form (ff)"]
    assert ff["unit"].tolist() == [
        "p1/specified/ff",
        "p2/specified/ff",
    ]  # specified only, one per profile
    assert ff["cluster"].tolist() == ["p1", "p2"]
    assert ff["value"].isna().tolist() == [False, True]  # p2 unscored, kept as NaN
    assert set(units["measure"]) == {h.measure for h in workflow.HEADLINES}


def test_coral_units_are_notes_clustered_by_the_metadata_patient(tmp_path):
    from oncoeval.studies.coral import workflow

    pd.DataFrame(
        {
            "gold_view": ["published", "published", "published", "clean"],
            "doc_id": ["n1", "n1", "n2", "n1"],
            "em_f1": [1.0, 0.0, 0.5, 0.0],
            "bleu4": [0.2, 0.4, 0.6, 0.0],
            "rouge1": [0.1, 0.3, 0.5, 0.0],
        }
    ).to_csv(tmp_path / "s.tsv", sep="\t", index=False)
    pd.DataFrame({"doc_id": ["n1", "n2"], "patient_id": ["pt1", "pt1"]}).to_csv(
        tmp_path / "meta.tsv", sep="\t", index=False
    )
    units = workflow.unit_scores(tmp_path / "s.tsv", {"metadata": tmp_path / "meta.tsv"})
    # Compared on the published view only (the informative view's rows are the summary's).
    assert units["measure"].str.contains("published view").all()
    em = units[units["measure"].str.startswith("EM-F1")].set_index("unit")
    assert em.loc["n1", "value"] == pytest.approx(0.5)  # mean of its published-view fields
    assert em["cluster"].tolist() == ["pt1", "pt1"]  # two notes of one patient: one cluster
    without = workflow.unit_scores(tmp_path / "s.tsv", {})
    assert without["cluster"].tolist()[:2] == ["n1", "n2"]


def test_guidelines_units_are_the_expert_labelled_notes(tmp_path):
    from oncoeval.studies.guidelines import workflow

    pd.DataFrame(
        {
            "patient_id": ["a", "b", "c"],
            "label": ["x>y", "", "x>z"],
            "path_overlap": [0.5, float("nan"), 1.0],
            "treatment_match": [1.0, float("nan"), 0.5],
        }
    ).to_csv(tmp_path / "s.tsv", sep="\t", index=False)
    units = workflow.unit_scores(tmp_path / "s.tsv", {})
    assert set(units["unit"]) == {"a", "c"}  # the unlabelled note is not a unit
    assert "meta-classifier AUROC (all features, held-out model)" not in set(units["measure"])


def test_a_perfect_share_gets_a_wilson_interval_not_a_zero_width_one():
    # 11 of 11 right (the demo's oracle): Wilson's lower bound n / (n + t^2), t at 10 df
    share = [Measure("x", "binary")]
    board = compare.leaderboard({"m": _long("x", [1.0] * 11)}, share, None, SETTINGS)
    row = board.iloc[0]
    assert row["interval"].startswith("Wilson score interval")
    assert row["ci_low"] == pytest.approx(11 / (11 + 2.228139**2), abs=1e-4)
    assert row["ci_high"] == pytest.approx(1.0)
    # the same 11 of 11 in a study table (mean_ci, the same declaration): the same interval
    assert compare.mean_ci([1.0] * 11, SETTINGS, kind="binary")[1:] == pytest.approx(
        (row["ci_low"], row["ci_high"])
    )


def test_intervals_stay_within_the_range_of_a_bounded_score():
    # F1 of 0 on five profiles and 0.11 on one: the t interval would reach below 0
    near_zero = [0.0, 0.0, 0.0, 0.0, 0.0, 0.11]
    perfect = [1.0] * 6
    scores = {"ref": _long("F1", perfect), "m": _long("F1", near_zero)}
    table = compare.comparison_table(scores, [Measure("F1")], SETTINGS)
    assert table.iloc[0]["diff_ci_high"] <= 1.0
    board = compare.leaderboard(scores, [Measure("F1")], table, SETTINGS).set_index("model")
    assert 0.0 <= board.loc["m", "ci_low"] < board.loc["m", "value"]
    assert board.loc["ref", "ci_low"] < 1.0 == board.loc["ref", "ci_high"]


def test_too_few_units_for_any_significance_say_so_instead_of_a_detectable_difference():
    # 4 units: the smallest sign-flip p is 2 / 16 = 0.125 > 0.05, so nothing is detectable
    scores = {"a": _long("EM", [0.9, 0.8, 0.7, 0.95]), "b": _long("EM", [0.1, 0.3, 0.2, 0.25])}
    table = compare.comparison_table(scores, [Measure("EM")], SETTINGS)
    assert table.iloc[0]["p_value"] == pytest.approx(2 / 16)
    said = "no difference can be significant with 4 clusters and 1 comparison"
    assert table.iloc[0]["mdd"] == said
    (sentence,) = compare.mdd_sentences(table, SETTINGS)
    assert sentence == f"EM (descriptive): {said}, whatever its size."


def test_rows_that_could_not_be_compared_do_not_break_the_detectable_difference():
    # the demo's corrected rows: the replayed reference is judged by its own verifier
    table = pd.DataFrame(
        [{"measure": "PCR corr", "model_a": "a", "model_b": "b", "test": "not compared: ..."}],
        columns=compare.COMPARISON_COLUMNS,
    )
    assert compare.mdd_sentences(table, SETTINGS) == []
