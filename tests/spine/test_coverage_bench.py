"""``python -m bench coverage`` sized down: the simulation's truth, and the engine's intervals and
verdicts on a few cells of the grid with fixed seeds (issue #34 item 6; the full grid is
docs/coverage.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import coverage_engine, coverage_sim
from bench.bench_coverage import Cell, _median_mdd, family_metrics, mean_coverage, run

ENGINE = coverage_engine.engine()


@pytest.mark.parametrize("key", ["score_low", "binary_05", "pcs"])
def test_simulated_truth_is_what_the_bench_scores_against(key):
    """Means, the shifted model's difference and the intra-cluster correlation of 0.3, against
    a large simulated sample."""
    kind = coverage_sim.KINDS[key]
    lead, rest = kind.shift_for(0.1)
    assert kind.mean(lead) - kind.mean(rest) == pytest.approx(0.1, abs=1e-9)
    rng = np.random.default_rng(0)
    scores, clusters = coverage_sim.draw(kind, rng, 40_000, True, [lead, rest])
    assert scores.mean(axis=1) == pytest.approx([kind.mean(lead), kind.mean(rest)], abs=0.01)
    # two units of one cluster (the first two of each), same model: correlation 0.3
    null, clusters = coverage_sim.draw(kind, rng, 40_000, True, [0.0])
    first = np.flatnonzero(np.r_[True, clusters[1:] != clusters[:-1]])
    assert np.corrcoef(null[0, first], null[0, first + 1])[0, 1] == pytest.approx(0.3, abs=0.03)


def test_no_zero_width_interval_of_a_clustered_rare_outcome_at_6_clusters():
    """Half of the samples of 6 clusters of a 0/1 outcome at p = 0.05 hold no 1 at all: their
    interval must still have width (main gave [0, 0] for each)."""
    res = mean_coverage(ENGINE, Cell("binary_05", True, 6), reps=200, seed=1, limit=0)
    assert res["mean_zero"] == 0
    _, low, high = ENGINE.mean_interval(np.zeros(14), np.repeat(np.arange(6), [2, 3, 2, 2, 3, 2]),
                                        coverage_sim.KINDS["binary_05"])  # fmt: skip
    assert low == 0 < high


def test_mean_interval_covers_a_clustered_rare_outcome_at_21_clusters():
    """Main covered 0.79 here (the cluster-robust t interval of a share near 0)."""
    res = mean_coverage(ENGINE, Cell("binary_05", True, 21), reps=400, seed=2, limit=0)
    assert res["mean_cov"] >= 0.92


@pytest.mark.parametrize(
    ("kind", "clustered", "clusters"),
    [("binary_05", False, 12), ("pcs", True, 6), ("score_mid", True, 12)],
)
def test_every_row_of_simulated_families_is_coherent(kind, clustered, clusters):
    """Interval and decision agree on every row of 3-model families, under the null and with one
    model ahead (main: 66-91% of rows in these cells)."""
    res = family_metrics(ENGINE, Cell(kind, clustered, clusters), reps=25, models=3, seed=3)
    assert res["coherent"] == 1.0
    assert res["fwer"] <= 0.2  # 25 null families: a sanity bound, the bench measures it


def test_command_writes_the_table_and_its_tsv(tmp_path):
    out = tmp_path / "coverage.md"
    argv = ["--reps", "20", "--family-reps", "4", "--clusters", "12", "--kinds", "binary_50",
            "--designs", "clustered", "--jobs", "1", "--out", str(out),
            "--stream", str(tmp_path / "cells.jsonl")]  # fmt: skip
    result = run(tmp_path, argv)
    # each finished cell's row is streamed as it lands (a run cut short keeps its cells)
    streamed = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert streamed == result["rows"]
    (row,) = result["rows"]
    assert (row["kind"], row["clusters"], row["mean_reps"], row["family_reps"]) == (
        "binary_50",
        12,
        20,
        4,
    )
    assert "| 0/1, p = 0.5 | clusters of 2-5 | 12 |" in out.read_text()
    header = out.with_suffix(".tsv").read_text().splitlines()[0].split("\t")
    assert header[:5] == ["kind", "design", "clusters", "mean_cov", "mean_zero"]
    # the tables redrawn from the saved run are the run's
    saved = tmp_path / "coverage.json"
    saved.write_text(json.dumps(result))
    again = tmp_path / "again.md"
    run(tmp_path, ["--render", str(saved), "--out", str(again)])
    assert again.read_text() == out.read_text()


def test_the_median_mdd_moves_with_the_truth_where_an_exact_tests_mdd_takes_steps():
    """An exact McNemar row prints one mdd per count of discordant pairs: with 52% of studies on
    the lower step the plain median sits on it (0.40) however the mass moves; the mean of the
    middle fifth (40th-60th percentile) is 12/20 x 0.40 + 8/20 x 0.42. Studies printing none
    (NaN) do not count; under half printing gives none."""
    steps = np.r_[np.full(52, 0.40), np.full(48, 0.42)]
    assert _median_mdd(steps) == (pytest.approx(0.408), 1.0)
    assert _median_mdd(np.r_[steps, np.full(100, np.nan)])[0] == pytest.approx(0.408)
    assert np.isnan(_median_mdd(np.r_[steps, np.full(101, np.nan)])[0])


def test_the_exact_mcnemar_fixed_point_is_where_the_power_is_80_percent():
    """0/1 p = 0.5, 21 independent units: pilot rounds stopping within 2% settled at 0.419,
    where the exact power of the row's McNemar test (alpha 0.05 / 3) is 0.76 (0.741 measured at
    R 2000); the exact fixed point (studies at that true difference print it as their
    middle-fifth mdd) is 0.431, where it is 0.80. Its middle fifth is checked against simulated studies of the cell."""
    from bench.bench_coverage import _mcnemar_fixed_point
    from oncoeval.stats import compare

    kind, eng = coverage_sim.KINDS["binary_50"], coverage_engine.engine()
    t = _mcnemar_fixed_point(eng, kind, 21, 3)
    lead, rest = kind.shift_for(t)
    share, a_only = coverage_sim.discordant(kind, lead, rest)
    assert t == pytest.approx(0.4313, abs=5e-4)
    assert compare.mcnemar_power(21, share, a_only / share, 0.05 / 3) == pytest.approx(
        0.80, abs=0.01
    )
    rng = np.random.default_rng(3)
    studies = [coverage_sim.draw(kind, rng, 21, False, [lead, rest, rest]) for _ in range(400)]
    printed = [eng.family(s, c, kind).mdd[0] for s, c in studies]
    assert _median_mdd(printed)[0] == pytest.approx(t, abs=0.01)
    assert np.mean([np.mean(s[0] != s[1]) for s, _ in studies]) == pytest.approx(share, abs=0.01)
