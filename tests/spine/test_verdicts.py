"""Verdicts that agree with their own numbers (issue #34): each comparison row's interval is the
inversion of its own test at its family's level, intervals follow the declared measure and are
never of zero width, and the three verdicts replace "tied"."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from oncoeval.stats import compare
from oncoeval.stats.bootstrap import BootstrapSettings
from oncoeval.stats.compare import Clustered, CompareSettings, Measure

SETTINGS = CompareSettings(bootstrap=BootstrapSettings(n_resamples=500, seed=0))
Z = stats.norm.ppf(0.975)


def _wilson(share, n, q):
    centre = (share + q * q / (2 * n)) / (1 + q * q / n)
    half = q * math.sqrt(share * (1 - share) / n + q * q / (4 * n * n)) / (1 + q * q / n)
    return centre - half, centre + half


def _scipy_p(values, shift):
    """scipy's exact sign-flip test of "mean = shift" (the reference the inversion must match)."""
    res = stats.permutation_test(
        (np.asarray(values, float) - shift,),
        np.sum,
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return res.pvalue


def test_six_clusters_the_interval_is_every_shift_the_sign_flip_test_keeps():
    # six independent differences: 2^6 = 64 flips, the smallest p 2/64 = 0.031 < 0.05
    d = np.array([0.05, 0.1, 0.15, 0.3, 0.35, 0.6])
    p, low, high = compare.sign_flip_interval(Clustered.of(d), 0.05, 9999, 0)
    assert p == pytest.approx(2 / 64) == pytest.approx(_scipy_p(d, 0))
    assert 0 < low < d.mean() < high
    # just inside the bounds scipy keeps the shift, just outside it rejects it
    for bound, inward in ((low, 1e-6), (high, -1e-6)):
        assert _scipy_p(d, bound + inward) > 0.05
        assert _scipy_p(d, bound - inward) <= 0.05
    # at alpha / 3 (three comparisons) 2/64 no longer rejects anything: the whole line
    assert compare.sign_flip_interval(Clustered.of(d), 0.05 / 3, 9999, 0)[1:] == (
        -np.inf,
        np.inf,
    )
    row = compare.compare_arrays(d + 0.2, np.full(6, 0.2), m=3, settings=SETTINGS)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == (-1.0, 1.0)
    assert row["verdict"] == compare.NOT_SEPARABLE and not row["significant"]
    assert row["mdd"] == "no difference can be significant with 6 clusters and 3 comparisons"


def test_paired_differences_all_equal_get_a_wilson_bound_not_a_point():
    # six profiles, every difference 0.2: the sign-flip interval alone is the point 0.2.
    row = compare.compare_arrays([0.7] * 6, [0.5] * 6, settings=SETTINGS)
    # Wilson's bound on 0 of 6 clusters departing from 0.2, each by at most the range's width
    u = Z * Z / (6 + Z * Z)  # 0.390
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx(
        (0.2 - u * 1.2, 0.2 + u * 0.8)
    )
    # its p is where that bound reaches 0: z^2 = 6 r / (1 - r), r = 0.2 / 1.2
    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(math.sqrt(6 * (1 / 6) / (5 / 6))))
    assert not row["significant"] and row["diff_ci_low"] < 0
    # every unit right for one model and wrong for the other: significant on both counts
    row = compare.compare_arrays([1.0] * 6, [0.0] * 6, list("aabbcc"), settings=SETTINGS)
    assert row["test"] == "sign-flip permutation (whole clusters)"
    assert row["p_value"] == pytest.approx(2 / 8)  # 3 clusters: 2/8, nothing can be rejected
    assert (row["diff_ci_low"], row["diff_ci_high"]) == (-1.0, 1.0)


def test_exact_mcnemar_and_its_interval_by_hand():
    # 10 independent units: a right / b wrong on 2, a wrong / b right on 6.
    a = [1, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [0, 0, 1, 1, 1, 1, 1, 1, 1, 0]
    row = compare.compare_arrays(a, b, kind="binary", settings=SETTINGS)
    assert row["test"].startswith("exact McNemar")
    assert row["p_value"] == pytest.approx(74 / 256)
    # Clopper-Pearson 95% of the split 2 of 8 and of the discordant share 8 of 10
    split = (stats.beta.ppf(0.025, 2, 7), stats.beta.ppf(0.975, 3, 6))
    share = (stats.beta.ppf(0.025, 8, 3), stats.beta.ppf(0.975, 9, 2))
    low = (2 * split[0] - 1) * share[1]  # the split's low is below 1/2: the larger share
    high = (2 * split[1] - 1) * share[1]
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((low, high), abs=1e-6)
    assert row["diff"] == pytest.approx(-0.4)
    # no discordant pair: the difference is 0, yet the interval has width (share 0 of 10)
    row = compare.compare_arrays([1] * 10, [1] * 10, kind="binary", settings=SETTINGS)
    top = stats.beta.ppf(0.975, 1, 10)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((-top, top))


def test_the_mdd_of_a_mcnemar_row_is_where_exact_mcnemar_reaches_its_power():
    # 30 pairs, 12 discordant (share 0.4): the exact power at the printed mdd is 80%, at
    # alpha / 3 for a family of three
    a = np.array([1] * 7 + [0] * 5 + [1] * 10 + [0] * 8)
    b = np.array([0] * 7 + [1] * 5 + [1] * 10 + [0] * 8)
    row = compare.compare_arrays(a, b, kind="binary", m=3, settings=SETTINGS)
    mdd = row["mdd"]
    theta = (1 + mdd / 0.4) / 2
    assert compare.mcnemar_power(30, 0.4, theta, 0.05 / 3) == pytest.approx(0.8, abs=1e-6)
    # by hand for one count: 10 discordant pairs at alpha 0.05 reject at 9 or 10 of 10 won
    # (2 x 11 / 1024 = 0.021; 8 of 10 gives 0.109): the power at theta = 0.9 is P(X >= 9)
    tail = stats.binom.sf(8, 10, 0.9)
    assert compare.mcnemar_power(10, 1.0, 0.9, 0.05) == pytest.approx(tail)


def test_the_mdd_of_a_sign_flip_row_is_where_the_exact_test_reaches_its_power():
    # 12 units, model a right on 8 where b is wrong, both alike on 4: differences 1 x 8, 0 x 4.
    # With no -1 the exact sign-flip sum is the count k of +1 (the zeros' signs do not move
    # it), and k is as extreme as 2 x 2^(12 - k) of the 4096 sign vectors: at 0.05 / 3 (69
    # vectors allowed) it rejects exactly when k >= 7. So where each unit is +1 with
    # probability delta (else 0) the power is P(Bin(12, delta) >= 7) - 0.82 at this sample's
    # own 8/12. The printed mdd must be where that reaches about 80%; the former "half-width
    # + t x SE" (0.52) had 44% power there: it ignored the lattice the test moves on and the
    # spread of the self-normalised statistic at 12 units.
    a, b = np.r_[np.ones(8), np.zeros(4)], np.zeros(12)
    row = compare.compare_arrays(a, b, m=3, settings=SETTINGS)
    assert compare.sign_flip_interval(Clustered.of(np.r_[np.ones(7), np.zeros(5)]), 0.05 / 3,
                                      9999, 0)[1] > 0  # fmt: skip
    assert compare.sign_flip_interval(Clustered.of(np.r_[np.ones(6), np.zeros(6)]), 0.05 / 3,
                                      9999, 0)[1] <= 0  # fmt: skip
    # 0.735 here since the critical value is read off whole-unit sums (0.758 before); the
    # 0.75-0.85 target is for the bench's cells, averaged over studies, not for one sample
    power = stats.binom.sf(6, 12, row["mdd"])
    assert 0.70 <= power <= 0.85
    assert stats.binom.sf(6, 12, 8 / 12) == pytest.approx(0.823, abs=1e-3)
    # the lattice: differences in whole units move the sum in steps of 2; scores do not
    assert compare.lattice_step([1, 0, -2, 1]) == 1.0
    assert compare.lattice_step([0.5, -1.5, 0]) == 0.5
    assert compare.lattice_step([0.31, -0.12, 0.05]) == 0.0


def test_the_mdd_reads_its_critical_value_off_whole_unit_cluster_sums():
    # 4 clusters at alpha 0.05: 16 sign vectors, 0.05 x 16 < 1, so only the largest |flipped
    # sum| is beyond reach: q = sum |X| / sqrt(sum X^2). Centred and shifted 0/1 cluster sums
    # 1.3, 1.3, 0.3, 0.3 are, in a study, whole units 1, 1, 0, 0: q = 2 / sqrt(2), not the
    # 3.2 / sqrt(3.56) of the spread-out values (the G 12 clustered 0/1 cell's power at the
    # printed mdd was 0.86 with those, above 0.85)
    four = compare._sign_vectors(4, 9999, 0)
    assert compare.sign_flip_critical([1.3, 1.3, 0.3, 0.3], four, 1, 1.0) == pytest.approx(
        math.sqrt(2)
    )
    assert compare.sign_flip_critical([1.3, 1.3, 0.3, 0.3], four, 1) == pytest.approx(
        3.2 / math.sqrt(3.56)
    )
    # 12 clusters, 8 summing to 1 and 4 to 0, at 0.05 / 3 (69th of 4096 allowed): |flipped
    # sum| is 8 for 2 x 16 vectors (the zeros' signs do not move it) and 6 for 16 x 16 more,
    # so the 69th largest is 6, a tie of 256 vectors: q = 6 / sqrt(8)
    twelve = compare._sign_vectors(12, 9999, 0)
    sums = [1.1] * 8 + [0.1] * 4
    assert compare.sign_flip_critical(sums, twelve, 69, 1.0) == pytest.approx(6 / math.sqrt(8))
    assert compare.sign_flip_critical(sums, twelve, 69) > 6.1 / math.sqrt(8)
    # all rounding to 0: the unrounded sums keep their spread
    assert compare.sign_flip_critical([0.2, -0.1, 0.3, 0.1], four, 1, 1.0) == pytest.approx(
        0.7 / math.sqrt(0.15)
    )


def test_a_pcs_sample_without_minus_one_is_still_a_score_on_minus_one_to_one():
    values = [1, 0, 1, 1, 0, 1]  # PCS, no -1 drawn: not a 0/1 share
    mean, low, high = compare.mean_ci(values, SETTINGS, kind="mean", value_range=(-1.0, 1.0))
    # by hand: rescaled to [0, 1] the share is (2/3 + 1) / 2; SE of the rescaled mean
    share = (2 / 3 + 1) / 2
    se = np.std(values, ddof=1) / math.sqrt(6) / 2
    dispersion = (6 * se**2 / (share * (1 - share)) * 5 + 1) / 6
    lo01, hi01 = _wilson(share, 6 / dispersion, stats.t.ppf(0.975, 5))
    assert mean == pytest.approx(2 / 3)
    assert (low, high) == pytest.approx((2 * lo01 - 1, 2 * hi01 - 1))
    assert low < 0  # a Wilson share of 4 of 6 on [0, 1] could never go below 0
    # the same values declared as a 0/1 share get Wilson's interval of 4 of 6: the declaration,
    # not the sample, picks the method
    share_ci = compare.mean_ci(values, SETTINGS, kind="binary")[1:]
    assert share_ci == pytest.approx(_wilson(4 / 6, 6, stats.t.ppf(0.975, 5)))
    with pytest.raises(ValueError, match="outside the declared range"):
        compare.mean_ci([-1, 0, 1], SETTINGS)


def test_a_sample_with_no_spread_gets_an_effective_n_bound_never_zero_width():
    # six clusters all at 0.7: no variance to estimate, so n = G = 6 with t at 5 df
    mean, low, high = compare.mean_ci([0.7] * 6, SETTINGS)
    assert (low, high) == pytest.approx(_wilson(0.7, 6, stats.t.ppf(0.975, 5)))
    # two clusters of three units, every unit right: still width, n = G = 2
    mean, low, high = compare.mean_ci([1.0] * 6, SETTINGS, list("aaabbb"), kind="binary")
    assert high == 1.0 and low == pytest.approx(_wilson(1.0, 2, stats.t.ppf(0.975, 1))[0])
    assert low < 0.2
    # all-correct of independent units: Wilson's interval in a table and in the leaderboard
    board = compare.leaderboard(
        {"m": _long("x", [1.0] * 11)}, [Measure("x", "binary")], None, SETTINGS
    ).iloc[0]
    assert compare.mean_ci([1.0] * 11, SETTINGS, kind="binary")[1:] == pytest.approx(
        (board["ci_low"], board["ci_high"])
    )


def _long(measure, values, clusters=None):
    n = len(values)
    return pd.DataFrame(
        {
            "measure": measure,
            "unit": [f"u{i}" for i in range(n)],
            "cluster": clusters if clusters is not None else [f"u{i}" for i in range(n)],
            "value": values,
        }
    )


def _random_scores(rng):
    """A random study: 2-4 models, 3-30 clusters of 1-4 units, a 0/1 or a bounded measure."""
    g = int(rng.integers(3, 31))
    sizes = rng.integers(1, 5, g) if rng.random() < 0.5 else np.ones(g, int)
    clusters = np.repeat(np.arange(g), sizes).astype(str)
    n = clusters.size
    binary = rng.random() < 0.5
    base = rng.uniform(0.05, 0.95)
    effect = rng.normal(0, 0.3, g)[np.repeat(np.arange(g), sizes)]
    scores = {}
    for k in range(int(rng.integers(2, 5))):
        shift = rng.choice([0.0, 0.0, 0.2, 0.5])
        p = stats.norm.cdf(stats.norm.ppf(base) + effect + shift + rng.normal(0, 0.5, n))
        values = (rng.random(n) < p).astype(float) if binary else p.round(2)
        if rng.random() < 0.2:  # sometimes a model equals another
            values = scores[next(iter(scores))]["value"].to_numpy() if scores else values
        scores[f"m{k}"] = _long("x", values, clusters)
    return scores, Measure("x", "binary" if binary else "mean", primary=rng.random() < 0.7)


def test_every_row_of_random_comparison_tables_is_coherent():
    rng = np.random.default_rng(34)
    settings = CompareSettings(permutations=999, bootstrap=SETTINGS.bootstrap)
    rows = 0
    for _ in range(60):
        scores, measure = _random_scores(rng)
        table = compare.comparison_table(scores, [measure], settings)
        board = compare.leaderboard(scores, [measure], table, settings)
        for r in table.itertuples():
            rows += 1
            excludes = r.diff_ci_low > 0 or r.diff_ci_high < 0
            assert r.significant == excludes == (r.p_adjusted <= settings.alpha), r
            assert r.diff_ci_low <= r.diff <= r.diff_ci_high
            assert r.diff_ci_high - r.diff_ci_low > 0  # never zero width
            assert r.ci_level == pytest.approx(1 - settings.alpha / r.m)
            assert (r.verdict.endswith("ahead")) == r.significant
            if r.verdict.startswith("equivalent"):
                assert -r.margin < r.diff_ci_low and r.diff_ci_high < r.margin
            if isinstance(r.mdd, str):
                assert compare.no_significance_possible(r.n_clusters, r.m, settings.alpha)
                assert not r.significant
        assert not (board["ci_high"] - board["ci_low"] <= 0).any()
        for said in board["standing"]:
            assert said in (compare.LEADER, compare.BEHIND) or any(
                w in said for w in ("equivalent", "not separable", "ahead")
            )
    assert rows > 150


def _coverage(draw, kind, truth, reps, value_range=(0.0, 1.0)):
    hits = 0
    for _ in range(reps):
        values, clusters = draw()
        _, low, high = compare.mean_ci(
            values, SETTINGS, clusters, kind=kind, value_range=value_range
        )
        hits += low <= truth <= high
    return hits / reps


@pytest.mark.parametrize("mean", [0.1, 0.9])
def test_skewed_bounded_scores_at_twelve_units_are_covered(mean):
    # Beta with mean 0.1 (or 0.9) and concentration 2: the skew that took Student-t to 0.88
    rng = np.random.default_rng(int(mean * 10))
    cover = _coverage(lambda: (rng.beta(mean * 2, (1 - mean) * 2, 12), None), "mean", mean, 400)
    assert cover >= 0.92


@pytest.mark.parametrize("g", [12, 21])
def test_rare_clustered_outcomes_are_covered(g):
    # p = 0.05, clusters of 2-5 units with a latent intra-cluster correlation of 0.3: the
    # cluster-robust t covered 0.76 / 0.79 here
    rng = np.random.default_rng(g)

    def draw():
        sizes = rng.integers(2, 6, g)
        cluster = np.repeat(np.arange(g), sizes)
        latent = np.sqrt(0.3) * rng.normal(size=g)[cluster]
        latent += np.sqrt(0.7) * rng.normal(size=cluster.size)
        return (latent > stats.norm.ppf(0.95)).astype(float), cluster

    assert _coverage(draw, "binary", 0.05, 400) >= 0.92


def test_the_difference_interval_covers_at_twelve_clusters():
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(200):
        base = rng.beta(2, 2, 12)
        a = np.clip(base + 0.1 + rng.normal(0, 0.15, 12), 0, 1)
        b = np.clip(base + rng.normal(0, 0.15, 12), 0, 1)
        row = compare.compare_arrays(a, b, settings=SETTINGS)
        hits += row["diff_ci_low"] <= 0.0955 <= row["diff_ci_high"]  # E[a - b] after clipping
    assert hits / 200 >= 0.91


def test_the_config_declares_margins_and_a_single_adjustment():
    settings = CompareSettings.from_config(
        {"comparisons": {"equivalence_margin": 0.1, "margins": {"F1": 0.02}}}
    )
    assert settings.margin("F1") == 0.02
    assert settings.margin("PCS", (-1.0, 1.0)) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="comparisons.adjustment"):
        CompareSettings.from_config({"comparisons": {"adjustment": "holm"}})
    assert list(itertools.islice(compare.ADJUSTMENTS, 2)) == ["bonferroni"]


def test_every_study_declares_one_primary_measure_with_its_kind_and_range():
    from oncoeval.studies import STUDIES
    from oncoeval.workflow import comparison

    for study in STUDIES:
        measures = comparison.study_measures(study)
        assert sum(m.primary for m in measures) == 1, study
        for m in measures:
            assert m.kind in compare.KINDS and m.value_range[0] < m.value_range[1], (study, m)
    pcs = comparison.study_measures("cancer_myth")[0]
    assert (pcs.name, pcs.value_range, pcs.primary) == ("PCS (raw judge verdicts)", (-1, 1), True)
