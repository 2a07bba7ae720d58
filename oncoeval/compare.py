"""Which model is better, by how much, and how sure: paired comparisons and leaderboards.

Generic over studies. A study gives, per evaluated model, one value per resampling unit and
headline measure (its ``unit_scores``), with the cluster each unit belongs to (units that share
a context: questions written from one myth, notes of one patient). Everything here resamples or
permutes whole clusters; a unit without a cluster is its own.

- Intervals (``interval``): an unclustered share of a per-unit binary outcome gets the Wilson
  interval; every other mean (bounded scores, clustered shares, paired differences) gets a
  Student-t interval on the cluster-robust standard error with G - 1 degrees of freedom (G
  clusters). ``bca`` and ``percentile`` resample clusters with ``scipy.stats.bootstrap`` instead
  (settable). docs/comparisons.md gives the coverage simulation behind the choice
  (bench/bench_coverage.py). The studies' own tables use the same intervals through
  ``mean_ci`` and ``paired_diff_ci`` (whole clusters, the workflow's ``auto`` choice), and
  name method, unit, cluster and n with ``interval_note``.
- Paired tests (``paired_test``): exact McNemar (two-sided binomial on the discordant pairs) for
  a binary outcome of unclustered units, otherwise a sign-flip permutation test of the mean
  difference that flips whole clusters (``scipy.stats.permutation_test``; exhaustive up to
  2^G <= the resamples).
- Multiplicity: Holm (or Benjamini-Hochberg) across every row of a study's comparison table.
- Minimum detectable difference: (t_{1-alpha/2} + t_{power}) x the cluster-robust standard error
  of the mean paired difference, G - 1 degrees of freedom.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from .schema import top_level_defaults
from .stats import BootstrapSettings

_DEFAULTS = top_level_defaults("comparisons")
INTERVALS = ("auto", "t", "bca", "percentile")
ADJUSTMENTS = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}
KINDS = ("mean", "binary")


@dataclass(frozen=True)
class CompareSettings:
    adjustment: str = _DEFAULTS["adjustment"]
    alpha: float = _DEFAULTS["alpha"]
    power: float = _DEFAULTS["power"]
    interval: str = _DEFAULTS["interval"]
    permutations: int = _DEFAULTS["permutations"]
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)

    @classmethod
    def from_config(cls, config: dict) -> CompareSettings:
        """The config's ``comparisons`` and ``bootstrap`` blocks (filled here when partial)."""
        block = {**_DEFAULTS, **((config or {}).get("comparisons") or {})}
        return cls(
            adjustment=str(block["adjustment"]),
            alpha=float(block["alpha"]),
            power=float(block["power"]),
            interval=str(block["interval"]),
            permutations=int(block["permutations"]),
            bootstrap=BootstrapSettings.from_config(config),
        )

    @property
    def level(self) -> float:
        return self.bootstrap.ci


# --- one sample of clustered per-unit values ---------------------------------------------------


@dataclass(frozen=True)
class Clustered:
    """Per-unit values and the cluster of each (NaN values dropped)."""

    values: np.ndarray
    codes: np.ndarray  # cluster index of each unit, 0..G-1

    @classmethod
    def of(cls, values, clusters=None) -> Clustered:
        x = np.asarray(values, dtype=float)
        if clusters is None:
            clusters = [None] * x.size
        # A unit without a cluster id is its own cluster, never one shared "missing" cluster.
        c = np.array(
            [f"unit:{i}" if pd.isna(k) or k == "" else f"id:{k}" for i, k in enumerate(clusters)]
        )
        keep = ~np.isnan(x)
        _, codes = np.unique(c[keep], return_inverse=True)
        return cls(x[keep], codes.astype(int))

    @property
    def n_units(self) -> int:
        return int(self.values.size)

    @property
    def n_clusters(self) -> int:
        return int(self.codes.max()) + 1 if self.values.size else 0

    @property
    def singletons(self) -> bool:
        """Every cluster is one unit (the units are independent)."""
        return self.n_clusters == self.n_units

    @property
    def sums(self) -> np.ndarray:
        return np.bincount(self.codes, weights=self.values, minlength=self.n_clusters)

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=self.n_clusters).astype(float)

    def mean(self) -> float:
        return float(self.values.mean()) if self.values.size else float("nan")

    def resampled_mean(self, draws) -> np.ndarray:
        """The unit mean of resampled clusters: ``draws`` (..., G) cluster indices, each drawn
        cluster entering with all its units."""
        draws = np.asarray(draws, dtype=int)
        return self.sums[draws].sum(axis=-1) / self.sizes[draws].sum(axis=-1)

    def standard_error(self) -> float:
        """Cluster-robust standard error of the unit mean (CR1: G/(G-1) small-sample factor);
        with one unit per cluster it is the usual s/sqrt(n)."""
        g = self.n_clusters
        if g < 2:
            return float("nan")
        resid = np.bincount(self.codes, weights=self.values - self.mean(), minlength=g)
        return float(math.sqrt(g / (g - 1) * np.sum(resid**2)) / self.n_units)


def is_binary(values) -> bool:
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    return bool(x.size) and bool(np.isin(x, (0.0, 1.0)).all())


def interval_method(data: Clustered, kind: str, settings: CompareSettings) -> str:
    """The interval a sample gets: the setting, or by kind of measure under ``auto``."""
    if settings.interval != "auto":
        return settings.interval
    if kind == "binary" and data.singletons:
        return "wilson"
    return "t"


METHOD_NAMES = {
    "wilson": "Wilson score interval",
    "t": "Student-t on the cluster-robust SE",
    "bca": "BCa cluster bootstrap",
    "percentile": "percentile cluster bootstrap",
}


def interval(data: Clustered, method: str, settings: CompareSettings) -> tuple[float, float]:
    """(low, high) of the unit mean at the settings' confidence level; NaN below 2 clusters."""
    mean = data.mean()
    if data.n_clusters < 2:
        return float("nan"), float("nan")
    if np.all(data.values == data.values[0]) and method != "wilson":
        return mean, mean
    level = settings.level
    if method == "wilson":
        count = int(round(data.values.sum()))
        low, high = proportion_confint(count, data.n_units, alpha=1 - level, method="wilson")
        # Wilson's interval holds the observed share; at 0 of n its computed low is ~3e-17, not
        # 0, which put a share of 0 outside its own interval (and a figure's error bar below 0).
        return min(float(low), mean), max(float(high), mean)
    if method == "t":
        half = stats.t.ppf(0.5 + level / 2, data.n_clusters - 1) * data.standard_error()
        return mean - half, mean + half
    if method in ("bca", "percentile"):
        return _bootstrap(data, method, settings.bootstrap)
    raise ValueError(f"comparisons.interval: unknown method {method!r}; known: {INTERVALS}")


def _bootstrap(data: Clustered, method: str, boot: BootstrapSettings) -> tuple[float, float]:
    """scipy's bootstrap over cluster indices (BCa's jackknife leaves out whole clusters)."""
    res = stats.bootstrap(
        (np.arange(data.n_clusters),),
        lambda draws, axis=-1: data.resampled_mean(draws),
        n_resamples=boot.n_resamples,
        confidence_level=boot.ci,
        method="BCa" if method == "bca" else "percentile",
        vectorized=True,
        rng=np.random.default_rng(boot.seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


# --- the studies' own tables: the same intervals, one call per mean -------------------------------


def as_compare_settings(settings=None) -> CompareSettings:
    """A study table's settings (its ``bootstrap`` block) as the comparison's, with the
    workflow's interval choice (``auto``) unless ``settings`` already is a CompareSettings."""
    if isinstance(settings, CompareSettings):
        return settings
    return CompareSettings(bootstrap=settings or BootstrapSettings())


def mean_ci(values, settings=None, clusters=None) -> tuple[float, float, float]:
    """(mean, ci_low, ci_high) of the unit mean of ``values``, resampling whole ``clusters``
    (one id per unit; None, NaN or "": the unit is its own cluster), by the comparison's own
    interval: ``interval_method`` by kind (Wilson for a share of independent units, else
    Student-t on the cluster-robust SE), clipped to the range the values can take. NaN values
    are dropped (an unscored unit is not a zero); the interval is NaN below 2 clusters."""
    s = as_compare_settings(settings)
    data = Clustered.of(values, clusters)
    if not data.n_units:
        return float("nan"), float("nan"), float("nan")
    method = interval_method(data, "binary" if is_binary(data.values) else "mean", s)
    low, high = bounded(*interval(data, method, s), data.values)
    return data.mean(), low, high


def paired_diff_ci(a, b, settings=None, clusters=None) -> tuple[float, float, float]:
    """(mean(a - b), ci_low, ci_high) of aligned per-unit values, resampling whole clusters
    of the paired differences (as ``compare_pair``); units where either is NaN are dropped."""
    s = as_compare_settings(settings)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    if clusters is not None:
        clusters = np.asarray(list(clusters), dtype=object)[keep]
    a, b = a[keep], b[keep]
    diffs = Clustered.of(a - b, clusters)
    if not diffs.n_units:
        return float("nan"), float("nan"), float("nan")
    low, high = interval(diffs, interval_method(diffs, "mean", s), s)
    lo, hi = bounded(-np.inf, np.inf, np.concatenate([a, b]))
    return diffs.mean(), max(low, lo - hi), min(high, hi - lo)


def interval_note(unit: str, cluster: str, n: str, settings=None) -> str:
    """The sentence every table with an interval carries: the method, the resampling unit,
    the cluster resampled whole, and which column gives n."""
    s = as_compare_settings(settings)
    if s.interval == "auto":
        method = (
            "Wilson score interval for a share of a 0/1 outcome over independent units, "
            "otherwise Student-t on the cluster-robust standard error (G - 1 df, G clusters)"
        )
    else:
        method = METHOD_NAMES[s.interval]
    whole = (
        "each unit its own cluster"
        if cluster == unit
        else f"cluster: {cluster}, resampled whole (a unit without one is its own)"
    )
    return f"Intervals ({s.level:.0%}): {method}. Unit: {unit}; {whole}. n: {n}."


# --- paired tests -------------------------------------------------------------------------------


def mcnemar_exact(a, b) -> float:
    """Two-sided exact McNemar p: binomial test of the a-only successes among discordant pairs."""
    a = np.asarray(a, dtype=float) == 1
    b = np.asarray(b, dtype=float) == 1
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def sign_flip_p(diffs: Clustered, n_resamples: int, seed: int) -> float:
    """Two-sided p of a sign-flip permutation test of the mean paired difference: under no
    difference, swapping the two models' answers within a cluster changes nothing, so each
    cluster's summed difference keeps or flips its sign."""
    sums = diffs.sums
    if sums.size == 0:
        return float("nan")
    if np.allclose(sums, 0):
        return 1.0
    res = stats.permutation_test(
        (sums,),
        lambda x, axis=-1: np.sum(x, axis=axis),
        permutation_type="samples",
        n_resamples=n_resamples,
        alternative="two-sided",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(min(1.0, res.pvalue))


TEST_NAMES = {
    "mcnemar": "exact McNemar (binomial on discordant pairs)",
    "sign_flip": "sign-flip permutation (units)",
    "cluster_sign_flip": "sign-flip permutation (whole clusters)",
}


def paired_test(a, b, clusters, kind: str, settings: CompareSettings) -> tuple[float, str]:
    """(p, test key) for aligned per-unit values of two models (no NaN)."""
    diffs = Clustered.of(np.asarray(a, float) - np.asarray(b, float), clusters)
    if kind == "binary" and diffs.singletons:
        return mcnemar_exact(a, b), "mcnemar"
    key = "sign_flip" if diffs.singletons else "cluster_sign_flip"
    return sign_flip_p(diffs, settings.permutations, settings.bootstrap.seed), key


def minimum_detectable_difference(diffs: Clustered, settings: CompareSettings) -> float:
    """The true mean difference a two-sided test at ``alpha`` detects with ``power``, given the
    observed spread of the paired differences and this many clusters (t approximation)."""
    g = diffs.n_clusters
    se = diffs.standard_error()
    if g < 2 or not se > 0 or smallest_p(g) > settings.alpha:
        return float("nan")
    t = stats.t.ppf(1 - settings.alpha / 2, g - 1) + stats.t.ppf(settings.power, g - 1)
    return float(t * se)


def smallest_p(n_clusters: int) -> float:
    """The smallest two-sided p a sign-flip test (or exact McNemar) can give on this many
    clusters (discordant pairs): 2 / 2^G. Above alpha, no difference is detectable at all."""
    return min(1.0, 2.0 / 2.0**n_clusters)


def bounded(low: float, high: float, values) -> tuple[float, float]:
    """An interval of a mean clipped to the range its values can take: [0, 1] for scores and
    shares, [-1, 1] where values go below 0 (PCS), wider where the values are."""
    x = np.asarray(values, dtype=float)
    lo, hi = min(0.0, float(np.min(x))), max(1.0, float(np.max(x)))
    return max(low, lo), min(high, hi)


def adjust(p_values, method: str) -> np.ndarray:
    """Multiplicity-adjusted p-values (statsmodels); NaN p-values stay NaN and do not count."""
    if method not in ADJUSTMENTS:
        raise ValueError(f"comparisons.adjustment: unknown {method!r}; known: {list(ADJUSTMENTS)}")
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    if known.any():
        out[known] = multipletests(p[known], method=method)[1]
    return out


# --- the study's tables -------------------------------------------------------------------------

UNIT_COLUMNS = ["measure", "unit", "cluster", "value"]
COMPARISON_COLUMNS = [
    "measure", "model_a", "model_b", "n_units", "n_clusters", "value_a", "value_b", "diff",
    "diff_ci_low", "diff_ci_high", "p_value", "p_adjusted", "significant", "test", "interval",
    "adjustment", "mdd",
]  # fmt: skip
LEADERBOARD_COLUMNS = [
    "measure", "model", "value", "ci_low", "ci_high", "n_units", "n_unscored", "n_clusters",
    "rank", "best", "p_vs_best_adjusted", "tied_with_best", "interval",
]  # fmt: skip


@dataclass(frozen=True)
class Measure:
    """A headline measure as compared (higher is better): its name and kind (``mean`` or
    ``binary``: a per-unit 0/1 outcome)."""

    name: str
    kind: str = "mean"


def _values(unit_scores: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One model's rows of one measure, indexed by unit (value NaN: the unit is unscored)."""
    rows = unit_scores[unit_scores["measure"] == measure]
    return rows.drop_duplicates("unit").set_index("unit")[["cluster", "value"]]


def _kind(*samples) -> str:
    """``binary`` where every value is 0 or 1 (a declared binary measure, or a mean of one
    rollout per note), so that shares get Wilson intervals and McNemar tests; else ``mean``."""
    return "binary" if all(is_binary(x) for x in samples) else "mean"


def compare_pair(a: pd.DataFrame, b: pd.DataFrame, measure: Measure, settings) -> dict:
    """One row of the comparison table: two models' values on the units both were scored on."""
    joined = a.join(b[["value"]].rename(columns={"value": "value_b"}), how="inner")
    joined = joined.rename(columns={"value": "value_a"}).dropna()
    x, y = joined["value_a"].to_numpy(float), joined["value_b"].to_numpy(float)
    diffs = Clustered.of(x - y, joined["cluster"].to_numpy())
    row = {"n_units": diffs.n_units, "n_clusters": diffs.n_clusters}
    if not diffs.n_units:
        return row | {"test": "no shared scored units"}
    kind = _kind(x, y)
    method = interval_method(diffs, "mean", settings)
    low, high = interval(diffs, method, settings)
    # a difference of two bounded means lies within +- the width of their range
    lo, hi = bounded(-np.inf, np.inf, np.concatenate([x, y]))
    low, high = max(low, lo - hi), min(high, hi - lo)
    p, test = paired_test(x, y, joined["cluster"].to_numpy(), kind, settings)
    return row | {
        "value_a": float(x.mean()),
        "value_b": float(y.mean()),
        "diff": diffs.mean(),
        "diff_ci_low": low,
        "diff_ci_high": high,
        "p_value": p,
        "test": TEST_NAMES[test],
        "interval": METHOD_NAMES[method],
        "mdd": minimum_detectable_difference(diffs, settings),
    }


def comparison_table(
    scores: dict[str, pd.DataFrame], measures: list[Measure], settings: CompareSettings
) -> pd.DataFrame:
    """Every pair of models (in sorted order: a before b) per measure; p adjusted across rows.

    ``scores``: model -> long frame (``UNIT_COLUMNS``) of its per-unit values.
    """
    rows = []
    for measure in measures:
        for a, b in itertools.combinations(sorted(scores), 2):
            va, vb = _values(scores[a], measure.name), _values(scores[b], measure.name)
            row = {"measure": measure.name, "model_a": a, "model_b": b}
            rows.append(row | compare_pair(va, vb, measure, settings))
    return adjusted(pd.DataFrame(rows, columns=COMPARISON_COLUMNS), settings)


def adjusted(df: pd.DataFrame, settings: CompareSettings) -> pd.DataFrame:
    """``p_adjusted`` and ``significant`` across every row of a comparison table."""
    df = df.copy()
    df["p_adjusted"] = adjust(df["p_value"], settings.adjustment) if len(df) else []
    df["significant"] = df["p_adjusted"] <= settings.alpha
    df["adjustment"] = ADJUSTMENTS[settings.adjustment]
    return df


def _pair_p(comparison: pd.DataFrame, measure: str, one: str, other: str) -> float:
    hit = comparison[
        (comparison["measure"] == measure)
        & (
            ((comparison["model_a"] == one) & (comparison["model_b"] == other))
            | ((comparison["model_a"] == other) & (comparison["model_b"] == one))
        )
    ]
    return float(hit["p_adjusted"].iloc[0]) if len(hit) else float("nan")


def value_rows(scores, measure: Measure, settings) -> list[dict]:
    """Each model's value of one measure over its scored units, with its interval."""
    rows = []
    for model in scores:
        values = _values(scores[model], measure.name)
        data = Clustered.of(values["value"].to_numpy(float), values["cluster"].to_numpy())
        kind = _kind(data.values)
        method = interval_method(data, kind, settings)
        low, high = interval(data, method, settings)
        if data.n_units:
            low, high = bounded(low, high, data.values)
        rows.append(
            {
                "measure": measure.name,
                "model": model,
                "value": data.mean(),
                "ci_low": low,
                "ci_high": high,
                "n_units": data.n_units,
                "n_unscored": int(values["value"].isna().sum()),
                "n_clusters": data.n_clusters,
                "interval": METHOD_NAMES[method],
            }
        )
    return rows


def ranked(rows: list[dict], comparison: pd.DataFrame, settings) -> list[dict]:
    """One measure's models ranked by value (1: highest), each flagged tied with the leader
    unless the leader's advantage over it is significant at the adjusted level."""
    table = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
    table["value"] = pd.to_numeric(table["value"], errors="coerce")
    if table["value"].notna().any():
        measure = table["measure"].iloc[0]
        table["rank"] = table["value"].rank(ascending=False, method="min").astype("Int64")
        table = table.sort_values(["rank", "model"], na_position="last")
        best = table["model"].iloc[0]
        p = [_pair_p(comparison, measure, best, m) if m != best else np.nan for m in table["model"]]
        table["best"] = best
        table["p_vs_best_adjusted"] = p
        # Not significantly behind the leader (or not testable: no shared units) is tied.
        table["tied_with_best"] = [
            m == best or not (pv <= settings.alpha) for m, pv in zip(table["model"], p, strict=True)
        ]
    return table.to_dict("records")


def leaderboard(scores, measures: list[Measure], comparison, settings, extra=()) -> pd.DataFrame:
    """Every measure's ranked models; ``extra``: value rows of measures compared elsewhere
    (corrected rates), ranked the same way."""
    groups = [value_rows(scores, m, settings) for m in measures]
    extra = pd.DataFrame(list(extra), columns=LEADERBOARD_COLUMNS)
    groups += [part.to_dict("records") for _, part in extra.groupby("measure", sort=False)]
    rows = [r for g in groups if g for r in ranked(g, comparison, settings)]
    return pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)


# --- one study's files --------------------------------------------------------------------------


def _workflow(study: str):
    import importlib

    return importlib.import_module(f"oncoeval.studies.{study}.workflow")


def study_measures(study: str) -> list[Measure]:
    """The study's headline measures that have per-unit values (``Headline.per_unit``)."""
    return [Measure(h.measure, h.kind) for h in _workflow(study).HEADLINES if h.per_unit]


def study_unit_scores(study: str, score_paths: dict, inputs: dict) -> dict[str, pd.DataFrame]:
    """model -> the study's per-unit values of that model (its ``unit_scores``)."""
    workflow = _workflow(study)
    return {m: workflow.unit_scores(path, inputs) for m, path in score_paths.items()}


def mdd_rows(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per measure: the median minimum detectable difference over the pairs, and n."""
    rows = []
    for measure, part in comparison.groupby("measure", sort=False):
        known = part["mdd"].dropna()
        rows.append(
            {
                "measure": measure,
                "mdd": float(known.median()) if len(known) else float("nan"),
                # rows that could not be compared (a model judged by its own verifier) have none
                "n_units": int(part["n_units"].fillna(0).max()) if len(part) else 0,
                "n_clusters": int(part["n_clusters"].fillna(0).max()) if len(part) else 0,
            }
        )
    return pd.DataFrame(rows, columns=["measure", "mdd", "n_units", "n_clusters"])


def mdd_sentences(comparison: pd.DataFrame, settings: CompareSettings) -> list[str]:
    """ "With 21 units this study tells apart differences of about 0.12 in F1", per measure."""
    out = []
    for r in mdd_rows(comparison).itertuples():
        if np.isnan(r.mdd):
            if r.n_clusters and smallest_p(r.n_clusters) > settings.alpha:
                out.append(
                    f"{r.measure}: with {r.n_clusters} independent units or clusters no "
                    f"difference can be significant (the smallest possible p is "
                    f"{smallest_p(r.n_clusters):.3g} > {settings.alpha}), whatever its size."
                )
            continue
        clusters = f" in {r.n_clusters} clusters" if r.n_clusters != r.n_units else ""
        out.append(
            f"{r.measure}: with {r.n_units} units{clusters} this study tells apart differences "
            f"of about {r.mdd:.3g} ({settings.power:.0%} power, alpha {settings.alpha}; median "
            "over the pairs)."
        )
    return out


def notes(study: str, settings: CompareSettings, skipped, extra=()) -> list[str]:
    """The Markdown notes of both tables: unit, cluster, methods and why."""
    workflow = _workflow(study)
    r = workflow.RESAMPLING
    level = f"{settings.level:.0%}"
    out = [
        f"Resampling unit: {r.unit}; cluster: {r.cluster} (every interval and test resamples or "
        "permutes whole clusters; a unit without a cluster is its own). n_units: the units both "
        "models were scored on (comparison) or the model was scored on (leaderboard).",
        f"Intervals ({level}): Wilson for the share of a binary outcome over independent units; "
        "otherwise Student-t on the cluster-robust standard error (G - 1 df), chosen because it "
        "covers 0.93-0.97 at 12-50 units in the simulation of docs/comparisons.md "
        f"(setting comparisons.interval: {settings.interval}).",
        "Tests: exact McNemar (binomial on discordant pairs) for a binary outcome of independent "
        "units, else a sign-flip permutation test of the mean paired difference (whole clusters "
        f"flipped; exact up to {settings.permutations} flips). p_adjusted: "
        f"{ADJUSTMENTS[settings.adjustment]} across every row of this table; significant at "
        f"{settings.alpha}. Rows: every pair of evaluated models (replayed reference sets only "
        "where the config's evaluate lists them).",
        f"mdd: the smallest true difference this comparison detects with {settings.power:.0%} "
        f"power at alpha {settings.alpha} (two-sided, unadjusted), from the observed spread of "
        "the paired differences. Intervals are per row (not adjusted); read significance from "
        "p_adjusted.",
        *extra,
    ]
    if skipped:
        out.append(
            "Not compared (no per-unit value, a statistic of the whole set): " + ", ".join(skipped)
        )
    return out


def write_study_comparison(
    study: str, score_paths: dict, inputs: dict, out: dict, settings, params=None
):
    """model_comparison.{tsv,md} and leaderboard.{tsv,md} of one study (``out`` names them:
    comparison, comparison_md, leaderboard, leaderboard_md). A study with judge-corrected rates
    adds their rows through its ``corrected_comparison(score_paths, inputs, params, settings)``
    -> (comparison rows, leaderboard value rows, notes); every row is adjusted together."""
    from .io import write_table

    workflow = _workflow(study)
    measures = study_measures(study)
    scores = study_unit_scores(study, score_paths, inputs)
    comparison = comparison_table(scores, measures, settings)
    skipped = [h.measure for h in workflow.HEADLINES if not h.per_unit]
    extra_values, extra_notes = [], []
    hook = getattr(workflow, "corrected_comparison", None)
    if hook is not None:
        rows, extra_values, extra_notes = hook(score_paths, inputs, params or {}, settings)
        if rows:
            more = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
            comparison = pd.concat([comparison, more], ignore_index=True)
        compared = {r["measure"] for r in rows} | {r["measure"] for r in extra_values}
        skipped = [s for s in skipped if s not in compared]
    comparison = adjusted(comparison, settings)
    board = leaderboard(scores, measures, comparison, settings, extra_values)
    text = notes(study, settings, skipped, extra_notes) + mdd_sentences(comparison, settings)
    if len(scores) < 2:
        text.append("Fewer than two evaluated models: nothing to compare.")
    title = workflow.REPORT_TITLE.split(" (")[0]
    write_table(
        comparison,
        out["comparison"],
        out["comparison_md"],
        f"{title}: paired model comparisons",
        text,
    )
    write_table(board, out["leaderboard"], out["leaderboard_md"], f"{title}: leaderboard", text)
    return comparison, board
