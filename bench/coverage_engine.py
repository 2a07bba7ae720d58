"""The comparison engine as ``python -m bench coverage`` calls it: one small adapter over
``oncoeval.stats.compare``, so the bench measures whichever engine the tree holds with the same
simulated studies.

An adapter gives
- ``mean_interval(values, clusters, kind)`` -> (mean, low, high): a study table's interval of one
  model's mean, the measure declared as ``kind.scale`` (``binary``, ``unit``, ``signed``);
- ``family(scores, clusters, kind)`` -> ``Family``: every pair of the models (rows of ``scores``)
  compared on one measure as the comparison table does it, multiplicity included: each row's
  difference, printed interval, whether the decision says one model is ahead, which, and the
  printed minimum detectable difference (NaN where none is printed).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from dataclasses import dataclass

import numpy as np

from oncoeval.stats import compare


@dataclass
class Family:
    """Rows in ``itertools.combinations(range(models), 2)`` order (a, b); diff = a - b."""

    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    significant: np.ndarray  # the decision: one model is ahead of the other
    mdd: np.ndarray  # printed minimum detectable difference; NaN where none is printed
    level: float  # nominal level of the printed difference intervals

    @property
    def coherent(self) -> np.ndarray:
        """Interval and decision agree: significant exactly where the interval excludes 0,
        on the side of the difference."""
        excludes = (self.low > 0) | (self.high < 0)
        side = np.where(self.low > 0, 1, np.where(self.high < 0, -1, 0))
        return (excludes == self.significant) & (~self.significant | (np.sign(self.diff) == side))


class MainEngine:
    """The engine of main at bb4eda9: mean_ci / paired_diff_ci / paired_test / adjust /
    minimum_detectable_difference; the kind of a sample is read from its values."""

    name = "main (bb4eda9)"

    def __init__(self, permutations: int | None = None):
        base = compare.CompareSettings()
        self.settings = compare.CompareSettings(permutations=permutations or base.permutations)

    def describe(self) -> str:
        s = self.settings
        return (
            f"engine: {self.name}; alpha {s.alpha}, {s.adjustment} over the family's rows, "
            f"{s.permutations} sign flips, power {s.power} for the mdd"
        )

    def mean_interval(self, values, clusters, kind) -> tuple[float, float, float]:
        return compare.mean_ci(values, self.settings, clusters)

    def family(self, scores, clusters, kind) -> Family:
        s = self.settings
        rows = []
        for a, b in itertools.combinations(range(scores.shape[0]), 2):
            x, y = scores[a], scores[b]
            diff, low, high = compare.paired_diff_ci(x, y, s, clusters)
            binary = compare.is_binary(x) and compare.is_binary(y)
            p, _ = compare.paired_test(x, y, clusters, "binary" if binary else "mean", s)
            mdd = compare.minimum_detectable_difference(compare.Clustered.of(x - y, clusters), s)
            rows.append((diff, low, high, p, mdd))
        diff, low, high, p, mdd = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
        significant = compare.adjust(p, s.adjustment) <= s.alpha
        return Family(diff, low, high, significant, mdd, s.level)


class DeclaredEngine(MainEngine):
    """The engine of issue #34: the interval by the measure's declared kind and range
    (``mean_ci(..., kind=, value_range=)``), one row per pair by ``compare_arrays`` with its
    family size ``m`` (the decision at alpha / m and the interval that inverts its test), the mdd
    a number or the sentence that no difference can be significant."""

    name = "declared kind and range, compare_arrays"

    def describe(self) -> str:
        s = self.settings
        return (
            f"engine: {self.name}; alpha {s.alpha} over the family's m pairs "
            f"({compare.ADJUSTMENTS.get(s.adjustment, s.adjustment)}), {s.permutations} sign "
            f"flips where not exact, power {s.power} for the mdd"
        )

    @staticmethod
    def declared(kind) -> dict:
        return {"kind": "binary" if kind.scale == "binary" else "mean", "value_range": kind.range}

    def mean_interval(self, values, clusters, kind) -> tuple[float, float, float]:
        return compare.mean_ci(values, self.settings, clusters, **self.declared(kind))

    def family(self, scores, clusters, kind) -> Family:
        pairs = list(itertools.combinations(range(scores.shape[0]), 2))
        rows = [
            compare.compare_arrays(
                scores[a], scores[b], clusters, m=len(pairs), settings=self.settings,
                **self.declared(kind),
            )
            for a, b in pairs
        ]  # fmt: skip
        mdd = [r["mdd"] if isinstance(r["mdd"], float) else np.nan for r in rows]
        return Family(
            np.array([r["diff"] for r in rows], dtype=float),
            np.array([r["diff_ci_low"] for r in rows], dtype=float),
            np.array([r["diff_ci_high"] for r in rows], dtype=float),
            np.array([bool(r["significant"]) for r in rows]),
            np.array(mdd, dtype=float),
            float(min(r["ci_level"] for r in rows)),
        )


@contextlib.contextmanager
def cached_sign_vectors():
    """Keep the engine's sign-flip matrices (a pure function of clusters, flips and seed) across
    its calls: drawing 10,000 x G signs anew for every row was most of a family's time in the
    bench. Results are unchanged."""
    draw = getattr(compare, "_sign_vectors", None)
    if draw is None or hasattr(draw, "cache_info"):
        yield
        return
    compare._sign_vectors = functools.lru_cache(maxsize=8)(draw)
    try:
        yield
    finally:
        compare._sign_vectors = draw


def engine(permutations: int | None = None):
    """The adapter of the engine this tree holds."""
    if hasattr(compare, "compare_arrays"):
        return DeclaredEngine(permutations)
    return MainEngine(permutations)
