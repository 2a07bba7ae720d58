"""Aggregate stage: Tables 1-7 of the paper and two figures. Tables: one row per model, means
with intervals over profiles (oncoeval.stats.compare.mean_ci: the comparison's own interval; the
profile is the cluster, its regimes and variants never resampled apart).

- Tables 1, 3, 4: P/R/F1 of the specified profiles under ``ff``, ``grounded``, ``grounded_lsc``;
  the same metrics of the base profiles (scored against the same site) as ``base_*`` columns.
- Table 2: ``ff_lsc`` - ``ff`` on the specified profiles, paired by profile.
- Table 5: overlap ratio of the base and specified lists under ``ff`` and ``ff_lsc``.
- Tables 6 and 7: recall by onset (each response's mean over its frequency cells) and by
  frequency (mean over its onset cells) on the specified profiles, averaged over the regimes per
  profile first, then resampled by profile; ``*_pooled`` columns pool the stratum's items
  instead (not the paper's figure).

Rows that could not be scored (failed call, unusable judge answer) are NaN in the scores and
are left out of a mean. ``n_profiles`` counts the profiles a mean was taken over (per regime in
Table 5, ``base_n_profiles`` for the base columns); ``n_unscored`` counts what was left out:
profiles in Tables 1-5, specified responses in Tables 6-7.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.io import read_tsv, write_table
from ...plotting import label_bars, legend_outside, note_empty, plt
from ...plotting import save as save_figure
from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import interval_note, mean_ci, paired_diff_ci
from .workflow import paths

PRF = ("precision", "recall", "f1")
ONSET_COLUMNS = ("recall_short", "recall_long")
FREQUENCY_COLUMNS = ("recall_common", "recall_uncommon", "recall_rare", "recall_extremely_rare")
TABLE_REGIMES = {"table1": "ff", "table3": "grounded", "table4": "grounded_lsc"}
TITLES = {
    "table1": "Table 1: precision, recall and F1, free-form generation (ff)",
    "table2": "Table 2: effect of the list-size constraint (ff_lsc - ff), paired by profile",
    "table3": "Table 3: selection from the clinician-curated list (grounded)",
    "table4": "Table 4: selection from the curated list with the list-size constraint (grounded_lsc)",
    "table5": "Table 5: overlap ratio between base and specified profiles (ff and ff_lsc)",
    "table6": "Table 6: recall by temporal onset (averaged over frequency levels and regimes)",
    "table7": "Table 7: recall by side-effect frequency (averaged over onsets and regimes)",
}


def _ci_columns(name: str, mean_low_high) -> dict:
    mean, low, high = mean_low_high
    return {name: mean, f"{name}_ci_low": low, f"{name}_ci_high": high}


def _per_profile(scores: pd.DataFrame, variant: str, regime: str) -> pd.DataFrame:
    rows = scores[(scores["variant"] == variant) & (scores["regime"] == regime)]
    return rows.set_index("profile_id").sort_index()


def _scored(frame: pd.DataFrame) -> pd.Series:
    """Rows that could be scored (a failed call or an unusable judge answer is NaN)."""
    return frame["precision"].notna() if len(frame) else pd.Series(dtype=bool)


def prf_row(model: str, scores: pd.DataFrame, regime: str, settings: BootstrapSettings) -> dict:
    spec = _per_profile(scores, "specified", regime)
    base = _per_profile(scores, "base", regime)
    row = {"model": model, "regime": regime, "n_profiles": int(_scored(spec).sum())}
    for metric in PRF:
        row.update(_ci_columns(metric, mean_ci(spec[metric] if len(spec) else [], settings)))
    for metric in PRF:
        values = base[metric] if len(base) else []
        row.update(_ci_columns(f"base_{metric}", mean_ci(values, settings)))
    row["n_unscored"] = int((~_scored(spec)).sum())
    row["base_n_profiles"] = int(_scored(base).sum())
    row["base_n_unscored"] = int((~_scored(base)).sum())
    return row


def delta_row(model: str, scores: pd.DataFrame, settings: BootstrapSettings) -> dict:
    after = _per_profile(scores, "specified", "ff_lsc")
    before = _per_profile(scores, "specified", "ff")
    both = after.index.intersection(before.index)
    ids = both[
        _scored(after).reindex(both).to_numpy(bool) & _scored(before).reindex(both).to_numpy(bool)
    ]
    row = {"model": model, "n_profiles": len(ids)}
    for metric in PRF:
        a = after.loc[ids, metric].to_numpy(float)
        b = before.loc[ids, metric].to_numpy(float)
        row.update(_ci_columns(f"delta_{metric}", paired_diff_ci(a, b, settings)))
    row["n_unscored"] = len(after.index.union(before.index)) - len(ids)
    return row


def overlap_row(model: str, overlap: pd.DataFrame, settings: BootstrapSettings) -> dict:
    row = {"model": model}
    for regime in ("ff", "ff_lsc"):
        values = overlap.loc[overlap["regime"] == regime, "overlap"]
        row[f"n_profiles_{regime}"] = int(values.notna().sum())
        row.update(_ci_columns(f"overlap_{regime}", mean_ci(values, settings)))
    row["n_unscored"] = int(
        overlap.loc[overlap["regime"].isin(["ff", "ff_lsc"]), "overlap"].isna().sum()
    )
    return row


def strata_row(model: str, scores: pd.DataFrame, columns, settings: BootstrapSettings) -> dict:
    """Per profile, the mean over regimes of each response's stratum recall; then over profiles.

    ``columns`` are the paper's (cell means); their ``_pooled`` twins follow as extra columns.
    """
    spec = scores[scores["variant"] == "specified"]
    scored = spec[_scored(spec)]
    pooled = [f"{c}_pooled" for c in columns]
    per_profile = scored.groupby("profile_id")[list(columns) + pooled].mean()  # mean skips NaN
    row = {"model": model, "n_profiles": len(per_profile)}
    for column in list(columns) + pooled:
        row.update(_ci_columns(column, mean_ci(per_profile[column], settings)))
    row["n_unscored"] = int(len(spec) - len(scored))
    return row


def build_tables(
    scores: dict[str, pd.DataFrame], overlaps: dict[str, pd.DataFrame], settings: BootstrapSettings
) -> dict[str, pd.DataFrame]:
    models = list(scores)
    tables = {}
    for name, regime in TABLE_REGIMES.items():
        tables[name] = pd.DataFrame([prf_row(m, scores[m], regime, settings) for m in models])
    tables["table2"] = pd.DataFrame([delta_row(m, scores[m], settings) for m in models])
    tables["table5"] = pd.DataFrame([overlap_row(m, overlaps[m], settings) for m in models])
    tables["table6"] = pd.DataFrame(
        [strata_row(m, scores[m], ONSET_COLUMNS, settings) for m in models]
    )
    tables["table7"] = pd.DataFrame(
        [strata_row(m, scores[m], FREQUENCY_COLUMNS, settings) for m in models]
    )
    return {name: tables[name] for name in sorted(tables)}


EXTRA_NOTES = {
    "table6": "Recall by onset: each response's mean over its onset's frequency cells, then over "
    "regimes per profile. *_pooled: all the onset's items taken together instead. n_unscored: "
    "specified responses left out.",
    "table7": "Recall by frequency: each response's mean over its frequency's onset cells, then "
    "over regimes per profile. *_pooled: all the frequency's items taken together instead. "
    "n_unscored: specified responses left out.",
    "table5": "n_unscored: profile-regime pairs whose overlap is undefined (both lists empty) "
    "or could not be matched; they are left out of the mean.",
    "table2": "Differences within each profile, then resampled by profile (paired).",
}
# Which column gives each table's n (the caption names it).
N_COLUMNS = {
    "table1": "n_profiles (specified lists), base_n_profiles (base lists)",
    "table2": "n_profiles (profiles scored under both regimes)",
    "table5": "n_profiles_ff, n_profiles_ff_lsc (profiles per regime)",
}
UNIT = (
    "patient profile (its list under the table's regime; where a table pools regimes, their "
    "mean within the profile)"
)
CLUSTER = (
    "the profile itself: its regimes and its base and specified variants are averaged or "
    "differenced within it, never resampled apart"
)


def notes(settings: BootstrapSettings, n_resp_unscored: int, table: str = "") -> list[str]:
    extra = [EXTRA_NOTES[table]] if table in EXTRA_NOTES else []
    n = N_COLUMNS.get(table, N_COLUMNS["table1"] if table in TABLE_REGIMES else "n_profiles")
    return extra + [
        "Means over profiles. " + interval_note(UNIT, CLUSTER, n, settings),
        f"Responses that could not be scored across all models: {n_resp_unscored} "
        f"(see the status column of {paths.scores('{model}')}).",
    ]


def error_bar(estimate: tuple[float, float, float]) -> list[list[float]]:
    """matplotlib's [[below], [above]] for (mean, low, high): no bar where the interval is
    unknown, and never a negative length (matplotlib refuses one; an interval from a bootstrap
    may fall beside its mean)."""
    mean, low, high = estimate
    below = 0.0 if np.isnan(low) else max(mean - low, 0.0)
    above = 0.0 if np.isnan(high) else max(high - mean, 0.0)
    return [[below], [above]]


def plot_precision_recall(
    scores: dict[str, pd.DataFrame], settings: BootstrapSettings, path
) -> None:
    regimes = ["ff", "ff_lsc", "grounded", "grounded_lsc"]
    markers = "osD^v<>px*"
    fig, ax = plt.subplots(figsize=(6.5, 5))
    colors = plt.get_cmap("tab10")
    n_points = 0
    for k, model in enumerate(scores):
        for r, regime in enumerate(regimes):
            spec = _per_profile(scores[model], "specified", regime)
            if spec.empty:
                continue
            p = mean_ci(spec["precision"], settings)
            rc = mean_ci(spec["recall"], settings)
            if np.isnan(p[0]) or np.isnan(rc[0]):
                continue
            xerr, yerr = error_bar(p), error_bar(rc)
            ax.errorbar(
                p[0],
                rc[0],
                xerr=xerr,
                yerr=yerr,
                fmt=markers[k % len(markers)],
                color=colors(r),
                # Hollow markers shrinking by regime: coinciding points stay visible as rings.
                markersize=12 - 2 * r,
                markerfacecolor="none",
                capsize=3,
                label=f"{model} · {regime}",
            )
            n = int(spec["precision"].notna().sum())
            ax.annotate(
                f"({p[0]:.2f}, {rc[0]:.2f}) n={n}", (p[0], rc[0]), xytext=(6, -4 - 8 * r),
                textcoords="offset points", fontsize=6, color=colors(r),
            )  # fmt: skip
            n_points += 1
    unscored = sum(int((~_scored(frame)).sum()) for frame in scores.values())
    note_empty(ax, n_points, unscored, "responses")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("precision (specified profiles)")
    ax.set_ylabel("recall (specified profiles)")
    ax.set_title("Precision vs recall by prompting regime")
    legend_outside(ax)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def plot_recall_strata(tables: dict[str, pd.DataFrame], path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [2, 4]})
    for ax, name, columns in (
        (axes[0], "table6", ONSET_COLUMNS),
        (axes[1], "table7", FREQUENCY_COLUMNS),
    ):
        table = tables[name]
        width = 0.8 / max(len(table), 1)
        x = np.arange(len(columns))
        for k, row in table.reset_index(drop=True).iterrows():
            means = np.array([row[c] for c in columns], dtype=float)
            low = np.array([row[f"{c}_ci_low"] for c in columns], dtype=float)
            high = np.array([row[f"{c}_ci_high"] for c in columns], dtype=float)
            err = np.clip(np.nan_to_num(np.vstack([means - low, high - means]), nan=0.0), 0, None)
            bars = ax.bar(
                x + k * width, np.nan_to_num(means), width, yerr=err, capsize=3, label=row["model"]
            )
            # Each bar's recall and the profiles it averages; a stratum without data: "no data".
            label_bars(ax, bars, means, [row["n_profiles"]] * len(columns), fontsize=6)
        ax.set_xticks(x + width * (len(table) - 1) / 2)
        ax.set_xticklabels([c.removeprefix("recall_").replace("_", " ") for c in columns])
        ax.set_ylim(0, 1.2)  # room for the value labels
        ax.set_ylabel("recall")
        n_profiles = int(table["n_profiles"].sum()) if len(table) else 0
        unscored = int(table["n_unscored"].sum()) if len(table) else 0
        note_empty(ax, n_profiles, unscored, "responses")  # unscored counts responses
    axes[0].set_title("by onset")
    axes[1].set_title("by frequency")
    legend_outside(axes[1])
    fig.suptitle("Recall of the specified profiles, averaged over regimes")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def write_tables_and_figures(
    models, score_paths, overlap_paths, outputs, settings: BootstrapSettings
) -> None:
    """Tables 1-7 and the figures of the models' scores, each to its path in ``outputs``
    (the aggregate rule's outputs, keyed as in ``workflow.OUTPUTS``)."""
    scores = {m: read_tsv(p) for m, p in zip(models, score_paths, strict=True)}
    overlaps = {m: read_tsv(p) for m, p in zip(models, overlap_paths, strict=True)}
    built = build_tables(scores, overlaps, settings)
    unscored = sum(int(s["precision"].isna().sum()) for s in scores.values())
    for name, table in built.items():
        write_table(
            table,
            outputs[name],
            outputs[f"{name}_md"],
            title=TITLES[name],
            notes=notes(settings, unscored, name),
        )
    plot_precision_recall(scores, settings, outputs["precision_recall"])
    plot_recall_strata(built, outputs["recall_strata"])
