"""Clusters, declared once per study (issue #26 item 3): units that share a context are resampled
together in every interval, the studies' own tables included; the per-unit score files carry
the unit and cluster ids; every table with an interval names its method, unit, cluster and n."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.stats.compare import CompareSettings, interval_note, mean_ci, paired_diff_ci
from oncoeval.studies import STUDIES, contract
from oncoeval.studies.side_effects.aggregate import error_bar

SETTINGS = BootstrapSettings(n_resamples=500, seed=0)
T_3DF, T_7DF = 3.182446305284263, 2.364624251592785  # t quantiles 0.975 at 3 and 7 df


def _score_bounds(mean, se, n, g, q, lo=0.0, hi=1.0):
    """The effective-n Wilson-type interval of a bounded score, written out: on the range
    rescaled to [0, 1], dispersion n se^2 / (m (1 - m)) shrunk by one pseudo-cluster of 1,
    n_eff = n / dispersion, then Wilson's formula with the t quantile q."""
    m, s = (mean - lo) / (hi - lo), se / (hi - lo)
    dispersion = (n * s * s / (m * (1 - m)) * (g - 1) + 1) / g
    k = n / dispersion
    centre = (m + q * q / (2 * k)) / (1 + q * q / k)
    half = q * np.sqrt(m * (1 - m) / k + q * q / (4 * k * k)) / (1 + q * q / k)
    return lo + (centre - half) * (hi - lo), lo + (centre + half) * (hi - lo)


def test_two_rollouts_of_one_note_move_together_by_hand():
    # Four notes, two rollouts each, the rollouts of a note agreeing: 0.6 0.6 | 0.4 0.4 | ...
    values = [0.6, 0.6, 0.4, 0.4, 0.55, 0.55, 0.45, 0.45]
    notes = ["a", "a", "b", "b", "c", "c", "d", "d"]
    # Clustered: residual sums per note 0.2, -0.2, 0.1, -0.1; CR1 SE = sqrt(4/3 x 0.1) / 8
    se = np.sqrt(4 / 3 * 0.1) / 8  # 0.04564
    mean, low, high = mean_ci(values, SETTINGS, notes)
    assert mean == pytest.approx(0.5)
    assert (low, high) == pytest.approx(_score_bounds(0.5, se, 8, 4, T_3DF))  # 0.238, 0.762
    # Treated as 8 independent rollouts the interval is narrower: s / sqrt(8), 7 df.
    s = np.sqrt(0.05 / 7)
    _, low8, high8 = mean_ci(values, SETTINGS)
    assert (low8, high8) == pytest.approx(_score_bounds(0.5, s / np.sqrt(8), 8, 8, T_7DF))
    assert high - low > 1.5 * (high8 - low8)


def test_a_paired_difference_resamples_whole_clusters_by_hand():
    # Two models on two rollouts of each of three notes: differences 0.3 0.3 | 0.1 0.1 | 0.2 0.2
    a = [0.8, 0.8, 0.6, 0.6, 0.7, 0.7]
    b = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    notes = ["x", "x", "y", "y", "z", "z"]
    # The sign-flip test flips whole notes: 2^3 = 8 patterns, so the smallest p is 2/8 > 0.05
    # and no shift is rejected: the interval is the whole range of a difference, [-1, 1].
    diff, low, high = paired_diff_ci(a, b, SETTINGS, notes)
    assert diff == pytest.approx(0.2)
    assert (low, high) == (-1.0, 1.0)
    # Six independent rollouts: 2^6 = 64 patterns; every difference positive, p = 2/64 < 0.05,
    # so 0 is outside; the bound is the 2nd largest (3rd with ties) shift not rejected.
    _, low6, high6 = paired_diff_ci(a, b, SETTINGS)
    assert 0 < low6 < 0.2 < high6 < 0.3 + 1e-9


def test_bootstrap_intervals_also_take_whole_clusters():
    # With the rollouts of a note identical, a cluster bootstrap draws only note means: the
    # percentile interval of 8 rollouts in 4 notes is that of the 4 note means.
    settings = CompareSettings(interval="percentile", bootstrap=SETTINGS)
    values = [0.9, 0.9, 0.2, 0.2, 0.6, 0.6, 0.3, 0.3]
    notes = ["a", "a", "b", "b", "c", "c", "d", "d"]
    clustered = mean_ci(values, settings, notes)
    per_note = mean_ci([0.9, 0.2, 0.6, 0.3], settings)
    assert clustered == pytest.approx(per_note)


def _guidelines_table1(tmp_path, right: list[bool]):
    """Table 1 of one model on notes answered twice each, both rollouts right or both wrong."""
    from oncoeval.studies.guidelines.tables_expert import table1_expert

    ids = [f"p{i}" for i in range(len(right))]
    scores = pd.DataFrame(
        {
            "model": "m",
            "patient_id": ids,
            "note_set": "labelled",
            "label": "A -> B",
            "path_overlap": [1.0 if r else 0.5 for r in right],
            "treatment_match": [float(r) for r in right],
            "modal_treatment_correct": [float(r) for r in right],
        }
    )
    rollouts = pd.DataFrame(
        [
            {
                "patient_id": pid,
                "rollout": k,
                "path": "A -> B" if r else "A -> C",
                "valid": True,
                "invalid_reason": "",
                "note_set": "labelled",
            }
            for pid, r in zip(ids, right, strict=True)
            for k in (0, 1)
        ]
    )
    out = tmp_path / "table1.tsv"
    table = table1_expert(scores, {"m": rollouts}, SETTINGS, out, tmp_path / "table1.md")
    return table.iloc[0], (tmp_path / "table1.md").read_text()


def test_cancerguide_table1_resamples_the_rollouts_of_a_patient_together(tmp_path):
    # 8 patients x 2 rollouts, 4 patients right twice and 4 wrong twice: treatment match 0.5.
    row, caption = _guidelines_table1(tmp_path, [True] * 4 + [False] * 4)
    assert row["treatment_match"] == pytest.approx(0.5)
    assert row["n_scored_rollouts"] == 16
    # By patient: cluster sums of residuals +-1, SE = sqrt(8/7 x 8) / 16 = 0.189, 7 df; 16
    # independent rollouts would get Wilson's [0.28, 0.72] instead.
    se = np.sqrt(8 / 7 * 8) / 16
    assert row["treatment_match_sem"] == pytest.approx(se, abs=1e-6)  # the table as written
    assert (row["treatment_match_ci_low"], row["treatment_match_ci_high"]) == pytest.approx(
        _score_bounds(0.5, se, 16, 8, T_7DF), abs=1e-6
    )  # 0.174, 0.826
    assert "Unit: rollout" in caption and "cluster: patient" in caption


def _cancer_myth_scores(path, rows):
    from oncoeval.studies.cancer_myth.score import score_frame

    judged = [
        {
            "question_id": q,
            "category": "c",
            "from_model": "g",
            "score": s,
            "parse_error": "",
            "verifier": "v",
            "retried": False,
            "reason": "",
            **({"cluster": c} if c else {}),
        }
        for q, c, s in rows
    ]
    score_frame(judged, ["v"], "majority").to_csv(path, sep="\t", index=False)
    return path


def test_cancer_myth_table_caption_names_method_unit_cluster_and_n(tmp_path):
    from oncoeval.studies.cancer_myth.aggregate import aggregate

    # Six questions from three myths, two each, answered alike within a myth.
    rows = [(f"q{i}", f"myth:{i // 2}", s) for i, s in enumerate([1, 1, -1, -1, 0, 0])]
    path = _cancer_myth_scores(tmp_path / "m.tsv", rows)
    names = ("pcs_pcr", "pcs_by_category", "pcs_by_generator", "jury_agreement")
    out = {n: str(tmp_path / f"{n}.tsv") for n in names}
    out |= {f"{n}_md": str(tmp_path / f"{n}.md") for n in names}
    out |= {f"{f}_figure": str(tmp_path / f"{f}.png") for f in names[:3]}
    aggregate({"m": str(path)}, out, SETTINGS)
    caption = (tmp_path / "pcs_pcr.md").read_text()
    # method, unit, cluster and n, each named
    assert "effective n of the cluster-robust standard error" in caption
    assert "Wilson score interval" in caption
    assert "Unit: question" in caption
    assert "cluster: the source record (myth)" in caption
    assert "n: the n column (questions scored), in n_clusters clusters" in caption
    table = pd.read_csv(tmp_path / "pcs_pcr.tsv", sep="\t").iloc[0]
    assert (table["n"], table["n_clusters"]) == (6, 3)
    # PCS over 3 myths (1, -1, 0) on its declared range [-1, 1]: SE = sqrt(3/2 x (2^2 + 2^2 +
    # 0)) / 6, t at 2 df
    se = np.sqrt(1.5 * 8) / 6
    bounds = _score_bounds(0.0, se, 6, 3, 4.302653, -1.0, 1.0)
    assert (table["pcs_ci_low"], table["pcs_ci_high"]) == pytest.approx(bounds, abs=1e-5)
    # a hand-written question (source_row -1: no cluster in its record) stays its own cluster
    alone = _cancer_myth_scores(tmp_path / "h.tsv", [("h1", "", 1), ("h2", "", 0)])
    assert pd.read_csv(alone, sep="\t")["cluster"].tolist() == ["h1", "h2"]


def test_interval_note_names_method_unit_cluster_and_n():
    note = interval_note("note", "patient", "n_notes", SETTINGS)
    assert note.startswith("Intervals (95%): chosen by each measure's declared kind and range")
    assert "Unit: note; cluster: patient, resampled whole" in note
    assert note.endswith("n: n_notes.")
    bca = interval_note("q", "q", "n", CompareSettings(interval="bca"))
    assert "BCa cluster bootstrap" in bca and "each unit its own cluster" in bca


def test_each_study_per_unit_score_file_carries_unit_and_cluster_ids():
    """The score stage of every study writes a unit and a cluster id on each row."""
    from oncoeval.studies.cancer_myth.score import SCORE_COLUMNS as MYTH
    from oncoeval.studies.coral.score import score_model as coral_scores
    from oncoeval.studies.guidelines.score import rollout_scores
    from oncoeval.studies.side_effects.score import score_rows

    frames = {}
    frames["cancer_myth"] = pd.DataFrame(columns=MYTH)
    parsed = [
        {
            "profile_id": "p1",
            "variant": v,
            "regime": r,
            "site": "lung",
            "items": [],
            "status": "error",
            "reason": "failed call",
            "n_non_list_lines": 0,
        }
        for v in ("base", "specified")
        for r in ("ff", "grounded")
    ]
    reference = pd.DataFrame({"site": ["lung"], "side_effect": ["cough"]})
    frames["side_effects"] = score_rows(parsed, {}, reference)
    coral_parsed = pd.DataFrame(
        {
            "doc_id": ["n1", "n2"],
            "section": "s",
            "subtype": "symptoms",
            "status": "error",
            "tuple_name": "",
            "field": "",
            "value": "",
        }
    )
    gold = pd.DataFrame(columns=["view", "doc_id", "section", "subtype", "field", "value"])
    gold["field_value"] = []
    frames["coral"] = coral_scores(coral_parsed, gold, {"n1": "pt1", "n2": "pt1"})
    rollouts = pd.DataFrame(
        {
            "patient_id": ["a", "a", "b"],
            "rollout": [0, 1, 0],
            "path": ["A -> B", "A -> C", ""],
            "invalid_reason": ["", "", "no_answer"],
        }
    )
    frames["guidelines"] = rollout_scores({"a": ("A", "B"), "b": ("A", "B")}, rollouts)
    assert set(frames) == set(STUDIES)
    for study, frame in frames.items():
        assert {"unit", "cluster"} <= set(frame.columns), study
    assert frames["side_effects"]["unit"].is_unique  # one row per list
    # CORAL's rows are the fields of a note (per gold view), averaged within their unit, the note
    assert (frames["coral"]["unit"] == frames["coral"]["doc_id"]).all()
    assert frames["side_effects"]["cluster"].eq("p1").all()  # regimes and variants together
    assert frames["coral"]["cluster"].eq("pt1").all()  # two notes of one patient
    guide = frames["guidelines"]
    assert guide["unit"].tolist() == ["a#r0", "a#r1", "b#r0"]  # the rollouts' request ids
    assert guide["cluster"].tolist() == ["a", "a", "b"]
    assert guide["treatment_match"].tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_declares_a_unit_and_a_cluster_that_differ(study):
    """Each study declares its unit and the cluster that groups units (never one per unit)."""
    resampling = contract.study(study).resampling
    assert resampling.unit and resampling.cluster
    assert resampling.cluster != resampling.unit, study


def test_guidelines_comparison_reads_one_value_per_rollout(tmp_path):
    from oncoeval.studies.guidelines import workflow

    rollouts = pd.DataFrame(
        {
            "unit": ["a/0", "a/1", "b/0"],
            "cluster": ["a", "a", "b"],
            "path_overlap": [1.0, 0.5, 0.0],
            "treatment_match": [1.0, 1.0, 0.0],
        }
    )
    (tmp_path / "r").mkdir()
    rollouts.to_csv(tmp_path / "r" / "m.tsv", sep="\t", index=False)
    units = workflow.unit_scores(tmp_path / "m.tsv", {"rollout_scores": [tmp_path / "r/m.tsv"]})
    overlap = units[units["measure"] == "path overlap"]
    assert overlap["unit"].tolist() == ["a/0", "a/1", "b/0"]
    assert overlap["cluster"].tolist() == ["a", "a", "b"]
    assert json.loads(json.dumps(overlap["value"].tolist())) == [1.0, 0.5, 0.0]


def test_judge_corrected_rates_resample_whole_clusters_too():
    """A corrected PCR's interval draws whole source records: ten myths with two questions each,
    answered alike, give the interval of the ten myths alone, wider than twenty independent
    questions would."""
    from oncoeval.judges.correction import corrected_rate

    truth = [True] * 20 + [False] * 20
    judged_validation = [True] * 18 + [False] * 2 + [False] * 18 + [True] * 2
    one_per_myth = np.array([True] * 6 + [False] * 4)
    two_per_myth = np.repeat(one_per_myth, 2)
    myths = np.repeat(np.arange(10), 2)
    args = (truth, judged_validation, SETTINGS)
    clustered = corrected_rate(two_per_myth, *args, clusters=myths)
    alone = corrected_rate(one_per_myth, *args, clusters=np.arange(10))
    independent = corrected_rate(two_per_myth, *args)
    # Rogan-Gladen: (0.6 + specificity 0.9 - 1) / (sensitivity 0.9 + 0.9 - 1) = 0.625
    assert clustered.value == pytest.approx(alone.value) == pytest.approx((0.6 + 0.9 - 1) / 0.8)
    assert (clustered.ci_low, clustered.ci_high) == pytest.approx((alone.ci_low, alone.ci_high))
    assert clustered.ci_high - clustered.ci_low > independent.ci_high - independent.ci_low


def test_coral_notes_of_one_patient_are_resampled_together():
    from oncoeval.studies.coral.aggregate import _summary

    # six notes of three patients, the notes of a patient alike: 0.6 0.6 | 0.4 0.4 | 0.5 0.5
    notes = [f"n{i}" for i in range(6)]
    values = [0.6, 0.6, 0.4, 0.4, 0.5, 0.5]
    df = pd.DataFrame(
        {
            "doc_id": notes,
            "cluster": ["A", "A", "B", "B", "C", "C"],
            "section": "s",
            "subtype": "symptoms",
            "unscored": False,
            "parse_failures": 0,
            **{m: values for m in ("bleu4", "rouge1", "em_f1")},
        }
    )
    row = _summary(df, SETTINGS)
    assert (row["n_notes"], row["n_clusters"]) == (6, 3)
    # patient residual sums 0.2, -0.2, 0: SE = sqrt(3/2 x 0.08) / 6, t at 2 df
    se = np.sqrt(1.5 * 0.08) / 6
    assert (row["em_f1_ci_low"], row["em_f1_ci_high"]) == pytest.approx(
        _score_bounds(0.5, se, 6, 3, 4.302653), abs=1e-5
    )


def test_a_share_of_zero_or_all_sits_inside_its_own_wilson_interval():
    # 0 of 6: Wilson's bounds (t at 5 df: t^2 = 6.608) are [0, t^2 / (6 + t^2)]; the interval
    # holds the 0 (the formula's computed low can be ~3e-17)
    mean, low, high = mean_ci([0] * 6, kind="binary")
    assert (mean, low) == (0.0, 0.0) and high == pytest.approx(6.608 / 12.608, abs=1e-3)
    mean, low, high = mean_ci([1] * 6, kind="binary")
    assert (mean, high) == (1.0, 1.0) and low == pytest.approx(6 / 12.608, abs=1e-3)


def test_a_figure_error_bar_is_never_negative_nor_drawn_for_an_unknown_bound():
    assert error_bar((0.0, 1e-17, 0.39)) == [[0.0], [0.39]]
    assert error_bar((0.5, float("nan"), 0.7)) == [[0.0], [pytest.approx(0.2)]]
