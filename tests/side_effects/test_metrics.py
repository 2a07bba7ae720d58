"""Metrics and aggregation, against values computed by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.studies.side_effects import aggregate, score
from oncoeval.studies.side_effects.metrics import overlap_ratio, prf, score_response

SITE = pd.DataFrame(
    {
        "site": ["S"] * 4,
        "side_effect": ["fatigue", "skin redness", "rib fracture", "heart damage"],
        "onset": ["short", "short", "long", "long"],
        "frequency": ["common", "common", "rare", "extremely_rare"],
    }
)


def test_precision_recall_f1_by_hand():
    # 5 predictions, 4 reference items, 2 matched: P = 2/5, R = 2/4, F1 = 2PR/(P+R) = 4/9
    p, r, f1 = prf(5, 4, 2)
    assert (p, r) == (0.4, 0.5)
    assert f1 == pytest.approx(4 / 9)
    assert prf(0, 4, 0) == (0.0, 0.0, 0.0)


def test_tables_6_and_7_average_the_onset_frequency_cells_not_the_pooled_items():
    site = pd.DataFrame(
        {
            "site": ["S"] * 5,
            "side_effect": ["fatigue", "skin redness", "nausea", "rib fracture", "heart damage"],
            "onset": ["short", "short", "short", "long", "long"],
            "frequency": ["common", "common", "rare", "rare", "rare"],
        }
    )
    # matched: fatigue (short, common) and nausea (short, rare)
    row = score_response(2, site, [(0, 0), (1, 2)])
    # cells: short-common 1/2, short-rare 1/1, long-rare 0/2
    assert (row["recall_short_common"], row["recall_short_rare"]) == (0.5, 1.0)
    assert row["recall_long_rare"] == 0.0 and math.isnan(row["recall_long_common"])
    # Table 6, short: mean over its frequency cells (0.5 + 1.0) / 2 = 0.75; pooled 2/3
    assert row["recall_short"] == 0.75
    assert row["recall_short_pooled"] == pytest.approx(2 / 3)
    # Table 7, rare: mean over its onset cells (1.0 + 0.0) / 2 = 0.5; pooled 1/3
    assert row["recall_rare"] == 0.5
    assert row["recall_rare_pooled"] == pytest.approx(1 / 3)
    assert row["recall_common"] == 0.5 == row["recall_common_pooled"]  # one cell: equal

    # then per profile over regimes, then over profiles: two responses of one profile
    other = score_response(2, site, [(0, 3)])  # rib fracture: short 0, long-rare 1/2
    scores = pd.DataFrame([row, other]).assign(
        profile_id="p", variant="specified", regime=["ff", "grounded"]
    )
    table6 = aggregate.strata_row("m", scores, aggregate.ONSET_COLUMNS, BootstrapSettings())
    assert table6["recall_short"] == pytest.approx((0.75 + 0.0) / 2)
    assert table6["recall_short_pooled"] == pytest.approx((2 / 3 + 0.0) / 2)
    assert table6["recall_long"] == pytest.approx((0.0 + 0.5) / 2)
    assert (table6["n_profiles"], table6["n_unscored"]) == (1, 0)


def test_counts_say_how_many_profiles_a_mean_was_taken_over():
    rows = []
    for pid in ("a", "b", "c"):
        for variant in ("base", "specified"):
            for regime in ("ff", "ff_lsc"):
                unscored = pid == "b" and variant == "specified" and regime == "ff"
                rows.append(
                    {
                        "profile_id": pid,
                        "variant": variant,
                        "regime": regime,
                        **{m: float("nan") if unscored else 0.5 for m in aggregate.PRF},
                        "recall_short": float("nan") if unscored else 0.5,
                        "recall_short_pooled": float("nan") if unscored else 0.5,
                    }
                )
    scores = pd.DataFrame(rows)
    settings = BootstrapSettings(n_resamples=100)
    table1 = aggregate.prf_row("m", scores, "ff", settings)
    assert (table1["n_profiles"], table1["n_unscored"]) == (2, 1)
    assert (table1["base_n_profiles"], table1["base_n_unscored"]) == (3, 0)
    table2 = aggregate.delta_row("m", scores, settings)
    assert (table2["n_profiles"], table2["n_unscored"]) == (2, 1)
    table6 = aggregate.strata_row("m", scores, ["recall_short"], settings)
    assert (table6["n_profiles"], table6["n_unscored"]) == (3, 1)  # b still has ff_lsc
    overlap = pd.DataFrame(
        {
            "profile_id": ["a", "b", "a", "b"],
            "regime": ["ff", "ff", "ff_lsc", "ff_lsc"],
            "overlap": [0.5, float("nan"), 0.4, 0.3],
        }
    )
    table5 = aggregate.overlap_row("m", overlap, settings)
    assert (table5["n_profiles_ff"], table5["n_profiles_ff_lsc"], table5["n_unscored"]) == (1, 2, 1)


def test_stratified_recall_counts_only_the_stratum():
    # matched: fatigue (short, common) and rib fracture (long, rare)
    row = score_response(3, SITE, [(0, 0), (2, 2)])
    assert row["recall_short"] == 0.5  # 1 of fatigue, skin redness
    assert row["recall_long"] == 0.5  # 1 of rib fracture, heart damage
    assert row["recall_common"] == 0.5
    assert row["recall_rare"] == 1.0
    assert row["recall_extremely_rare"] == 0.0
    assert math.isnan(row["recall_uncommon"])  # empty stratum


def test_overlap_is_intersection_over_union_by_hand():
    # |A| = 4, |B| = 5, 3 matched: 3 / (4 + 5 - 3) = 0.5
    assert overlap_ratio(4, 5, 3) == 0.5
    assert math.isnan(overlap_ratio(0, 0, 0))


def _parsed(pid, variant, regime, items, status="ok"):
    return {
        "profile_id": pid,
        "variant": variant,
        "regime": regime,
        "site": "S",
        "items": items,
        "n_non_list_lines": 1,
        "n_duplicates": 0,
        "status": status,
        "reason": None,
    }


def test_score_joins_parsed_lists_and_matches():
    parsed = [
        _parsed("p1", "base", "ff", ["fatigue", "nausea"]),
        _parsed("p1", "specified", "ff", ["fatigue", "skin redness", "cough"]),
        _parsed("p2", "specified", "ff", [], status="error"),
    ]
    matches = [
        {"key": "ref|p1|base|ff", "pairs": [[0, 0]], "status": "ok", "reason": None},
        {"key": "ref|p1|specified|ff", "pairs": [[0, 0], [1, 1]], "status": "ok", "reason": None},
        {"key": "ovl|p1|ff", "pairs": [[0, 0]], "status": "ok", "reason": None},
    ]
    scores, overlap = score.score(parsed, matches, SITE)
    spec = scores[(scores.profile_id == "p1") & (scores.variant == "specified")].iloc[0]
    assert (spec.n_pred, spec.n_ref, spec.n_matched) == (3, 4, 2)
    assert spec.precision == pytest.approx(2 / 3) and spec.recall == 0.5
    failed = scores[scores.profile_id == "p2"].iloc[0]
    assert failed.status == "error" and math.isnan(failed.precision)
    ovl = overlap.set_index("profile_id").loc["p1"]
    assert (ovl.n_base, ovl.n_specified, ovl.n_common) == (2, 3, 1)
    assert ovl.overlap == pytest.approx(1 / 4)  # 1 / (2 + 3 - 1)
    assert overlap.set_index("profile_id").loc["p2", "status"] == "error"


def test_recall_strata_are_averaged_over_regimes_per_profile_first():
    scores = pd.DataFrame(
        {
            "profile_id": ["a", "a", "b"],
            "variant": ["specified"] * 3,
            "regime": ["ff", "grounded", "ff"],
            "precision": [0.5, 0.5, 0.5],
            "recall_short": [0.2, 0.6, 1.0],
            "recall_short_pooled": [0.2, 0.6, 1.0],
        }
    )
    row = aggregate.strata_row("m", scores, ["recall_short"], BootstrapSettings(n_resamples=200))
    # profile a: (0.2 + 0.6) / 2 = 0.4; profile b: 1.0; mean over profiles = 0.7 (not 0.6)
    assert row["recall_short"] == pytest.approx(0.7)


def test_table2_delta_is_paired_by_profile():
    rows = []
    for pid, ff, lsc in [("a", 0.9, 0.5), ("b", 0.5, 0.2), ("c", 0.3, 0.1)]:
        for regime, value in (("ff", ff), ("ff_lsc", lsc)):
            rows.append(
                {
                    "profile_id": pid,
                    "variant": "specified",
                    "regime": regime,
                    "precision": value,
                    "recall": value,
                    "f1": value,
                }
            )
    row = aggregate.delta_row("m", pd.DataFrame(rows), BootstrapSettings(n_resamples=500))
    assert row["delta_precision"] == pytest.approx(-(0.4 + 0.3 + 0.2) / 3)
    # paired differences -0.4, -0.3, -0.2: the sign-flip test by profile has 2^3 = 8 flips, its
    # smallest p 2/8 > 0.05, so no shift is rejected: the interval is every difference, [-1, 1]
    assert (row["delta_precision_ci_low"], row["delta_precision_ci_high"]) == (-1.0, 1.0)
    # six profiles, every difference negative: p = 2/64 < 0.05 and the interval is below 0
    six = pd.concat([pd.DataFrame(rows).assign(profile_id=lambda d, k=k: d["profile_id"] + k)
                     for k in ("1", "2")])  # fmt: skip
    row = aggregate.delta_row("m", six, BootstrapSettings(n_resamples=500))
    assert row["n_profiles"] == 6 and row["delta_precision_ci_high"] < 0


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    settings = BootstrapSettings(n_resamples=400, ci=0.95, seed=1)
    true_mean, covered, trials = 0.6, 0, 300
    for _ in range(trials):
        # per-profile recall-like values on [0, 1]
        sample = rng.beta(6, 4, size=40)
        row = aggregate.strata_row(
            "m",
            pd.DataFrame(
                {
                    "profile_id": range(40),
                    "variant": "specified",
                    "regime": "ff",
                    "precision": 0.5,
                    "recall_short": sample,
                    "recall_short_pooled": sample,
                }
            ),
            ["recall_short"],
            settings,
        )
        covered += row["recall_short_ci_low"] <= true_mean <= row["recall_short_ci_high"]
    # 300 trials give a standard error of ~1.3%
    assert 0.90 <= covered / trials <= 0.99


def test_unusable_judge_answers_are_unscored_and_a_dropped_pair_is_noted():
    parsed = [
        _parsed("p1", "specified", "ff", ["fatigue", "skin redness"]),
        _parsed("p2", "specified", "ff", ["fatigue"]),
        _parsed("p3", "specified", "ff", ["fatigue"]),
    ]
    note = "1 judge pairs dropped by the assignment (A2=B1)"
    matches = [
        {"key": "ref|p1|specified|ff", "pairs": [[0, 0]], "status": "ok", "reason": note},
        {"key": "ref|p2|specified|ff", "pairs": [], "status": "truncated", "reason": "cut"},
        {"key": "ref|p3|specified|ff", "pairs": [[0, 0]], "status": "contradictory", "reason": "x"},
    ]
    scores, _ = score.score(parsed, matches, SITE)
    scores = scores.set_index("profile_id")
    assert scores.loc["p1", "status"] == "ok" and scores.loc["p1", "precision"] == 0.5
    assert scores.loc["p1", "reason"] == f"matcher: {note}"
    assert scores.loc["p2", "status"] == "match_truncated" and math.isnan(scores.loc["p2", "f1"])
    assert scores.loc["p3", "status"] == "match_contradictory"
    assert math.isnan(scores.loc["p3", "precision"])
    table1 = aggregate.prf_row("m", scores.reset_index(), "ff", BootstrapSettings(n_resamples=50))
    assert (table1["n_profiles"], table1["n_unscored"]) == (1, 2)
