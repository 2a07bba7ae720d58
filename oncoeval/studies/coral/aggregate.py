"""Tables and figures from per-unit scores: views, means with note-level bootstrap CIs,
cancer-type strata, and Kruskal-Wallis tests across demographic groups with BH q-values.

Views (the ``view`` column):

- ``published``: the published gold derivation (``gold.PUBLISHED``) and every unit, as the
  study's code counted them; units without gold, where an ``unknown`` answer scores 1, and units
  whose gold is only ``unknown`` pairs are included.
- ``gold_present``: the published gold, units with at least one gold tuple.
- ``informative``: the published gold, units whose gold has at least one pair with a known value
  (drops the unknown-only units, which are also all the units without gold).
- ``clean``: this project's gold derivation (``gold.CLEAN``), informative units only.

Units of failed calls (``unscored``) have no metric: they are left out of every mean and counted
in ``n_unscored``.

Means are over notes: each note's units are averaged first, and the percentile bootstrap
(``oncoeval.stats.bootstrap``) resamples notes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from ...plotting import label_bars, legend_outside, note_empty
from ...plotting import save as save_figure
from ...stats.bootstrap import BootstrapSettings
from ...stats.compare import interval_note, mean_ci
from .tasks import SUBTYPES
from .workflow import METRICS, figure_name


def _gold(df: pd.DataFrame, view: str) -> pd.DataFrame:
    return df[df["gold_view"] == view]


def _known(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["gold_unknown_only"].astype(bool)]


VIEWS = {
    "published": lambda df: _gold(df, "published"),
    "gold_present": lambda df: (lambda d: d[d["n_gold"] > 0])(_gold(df, "published")),
    "informative": lambda df: _known(_gold(df, "published")),
    "clean": lambda df: _known(_gold(df, "clean")),
}
VIEW_NOTES = [
    "View `published` uses the gold the study's public code derives (its documented defects "
    "corrected: laterality joined into Site, no trailing newline in adverse events, 'uncertain' "
    "spelled right) and counts every unit as that code did: an answer without tuples and a "
    "missing gold are both the all-unknown tuple ('unknown unknown'), so a unit without gold "
    "that the model answers 'unknown' scores 1. Remaining differences from the public code are "
    "listed in docs/departures.md (CORAL: published view and deliberate differences).",
    "Views `gold_present` and `informative` (published gold) drop units without any gold "
    "tuple, and units whose gold pairs are all 'unknown'; view `clean` scores the informative "
    "units against this project's own gold derivation (every GoldRules switch on). All three are "
    "stricter than the paper.",
    "BLEU-4 smooths every order by add-one, as the study did: a prediction too short to have "
    "3- or 4-grams gets precision 1 on those orders, so short answers (such as 'unknown') score "
    "well above 0 against any gold.",
    "Means are over notes (each note's units averaged first). `n_units`: the scored fields; "
    "`parse_failures`: answer lines that named a tuple but could not be read, counted "
    "once per answer. `n_unscored`: units of failed calls (an error instead of an answer), "
    "left out of every mean.",
]


def with_labels(scores: pd.DataFrame) -> pd.DataFrame:
    df = scores.copy()
    df["task"] = df["subtype"].map(lambda s: SUBTYPES[s].task)
    df["label"] = [
        SUBTYPES[s].pair_label(f) for s, f in zip(df["subtype"], df["field"], strict=True)
    ]
    return df


def _note_means(df: pd.DataFrame, metric: str) -> tuple[np.ndarray, list | None]:
    """Each note's mean of its units, and the note's cluster (its patient; None: the score
    file has no cluster column, each note its own)."""
    means = df.groupby("doc_id")[metric].mean()
    if "cluster" not in df:
        return means.to_numpy(dtype=float), None
    clusters = df.groupby("doc_id")["cluster"].first().reindex(means.index)
    return means.to_numpy(dtype=float), clusters.tolist()


def _summary(df: pd.DataFrame, settings: BootstrapSettings) -> dict:
    # parse failures are per answer (note, section, subtype): count each answer once
    answers = df.drop_duplicates(["doc_id", "section", "subtype"])
    unscored = df["unscored"].astype(bool) if "unscored" in df else pd.Series(False, df.index)
    row = {
        "n_units": len(df),
        "n_unscored": int(unscored.sum()),
        "n_notes": df["doc_id"].nunique(),
        "n_clusters": df["cluster"].nunique() if "cluster" in df else df["doc_id"].nunique(),
        "parse_failures": int(answers["parse_failures"].sum()) if "parse_failures" in df else 0,
    }
    for metric in METRICS:
        values, clusters = _note_means(df, metric)
        mean, low, high = mean_ci(values, settings, clusters)
        row.update({metric: mean, f"{metric}_ci_low": low, f"{metric}_ci_high": high})
    return row


def summarise(
    scores: dict[str, pd.DataFrame], by: list[str], settings: BootstrapSettings
) -> pd.DataFrame:
    """One row per model, view and group of ``by`` columns."""
    rows = []
    for model, df in scores.items():
        df = with_labels(df)
        for view, select in VIEWS.items():
            sub = select(df)
            groups = sub.groupby(by, sort=False) if by else [((), sub)]
            for key, group in groups:
                if len(group) == 0:
                    continue
                key = key if isinstance(key, tuple) else (key,)
                rows.append(
                    {
                        "model": model,
                        "view": view,
                        **dict(zip(by, key, strict=True)),
                        **_summary(group, settings),
                    }
                )
    cols = ["model", "view", *by, "n_units", "n_unscored", "n_notes", "n_clusters"]
    cols += ["parse_failures"]
    for metric in METRICS:
        cols += [metric, f"{metric}_ci_low", f"{metric}_ci_high"]
    return pd.DataFrame(rows, columns=cols)


def kruskal_table(
    scores: dict[str, pd.DataFrame], metadata: pd.DataFrame, column: str
) -> pd.DataFrame:
    """Kruskal-Wallis H across the groups of ``column`` per pair label, model and metric.

    Scored units of the published view are grouped by their note's ``column`` value (notes
    without a value are left out; ``n_unscored`` counts the failed-call units left out). A test
    needs two groups with data and not all values equal; otherwise its statistic and p are NaN
    and the ``note`` says why. q-values: Benjamini-Hochberg over every
    test of the table that has a p-value.
    """
    rows = []
    meta = metadata.set_index("doc_id")[column] if column in metadata else pd.Series(dtype=str)
    for model, df in scores.items():
        df = with_labels(VIEWS["published"](df))
        df = df.assign(group=df["doc_id"].map(meta).fillna("").astype(str).str.strip())
        for (subtype, field, label), unit in df.groupby(["subtype", "field", "label"], sort=False):
            failed = unit["unscored"].astype(bool)
            scored = unit[~failed & (unit["group"] != "")]
            samples = {g: s for g, s in scored.groupby("group")}
            for metric in METRICS:
                values = [s[metric].to_numpy(dtype=float) for s in samples.values()]
                row = {
                    "label": label,
                    "subtype": subtype,
                    "field": field,
                    "model": model,
                    "metric": METRICS[metric][0],
                    "groups": ";".join(f"{g}:{len(s)}" for g, s in samples.items()),
                    "n_unscored": int(failed.sum()),
                    "statistic": np.nan,
                    "p_value": np.nan,
                    "note": "",
                }
                if not values:
                    row["note"] = "no scored units"
                elif len(values) < 2:
                    row["note"] = "fewer than two groups"
                elif len(np.unique(np.concatenate(values))) < 2:
                    row["note"] = "all values equal"
                else:
                    res = sps.kruskal(*values)
                    row["statistic"], row["p_value"] = float(res.statistic), float(res.pvalue)
                rows.append(row)
    table = pd.DataFrame(
        rows,
        columns=[
            "label",
            "subtype",
            "field",
            "model",
            "metric",
            "groups",
            "n_unscored",
            "statistic",
            "p_value",
            "note",
        ],
    )
    table["q_value"] = bh_qvalues(table["p_value"].to_numpy(dtype=float))
    return table


def bh_qvalues(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q-values (statsmodels ``fdr_bh``); NaN p-values stay NaN."""
    q = np.full(len(pvalues), np.nan)
    ok = ~np.isnan(pvalues)
    if ok.any():
        q[ok] = multipletests(pvalues[ok], method="fdr_bh")[1]
    return q


def figure3(by_field: pd.DataFrame, metric: str, path, title: str, series=("model",)) -> None:
    """One Figure 3 panel: mean per pair label (grouped by task), one bar per series.

    ``series`` are the columns whose values make one bar (``model``; ``model`` and
    ``cancer_type`` for Figure S2).
    """
    from ...plotting import plt

    df = by_field[by_field["view"] == "published"].copy()
    df["series"] = df[list(series)].astype(str).agg(" / ".join, axis=1)
    order = [s.pair_label(f) for s in SUBTYPES.values() for f in s.fields]
    labels = [lab for lab in order if lab in set(df["label"])]
    names = list(dict.fromkeys(df["series"]))
    fig, ax = plt.subplots(figsize=(6, 0.32 * max(len(labels), 3) * max(1, len(names) / 2) + 1.2))
    height = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        sub = df[df["series"] == name].set_index("label")
        y = np.arange(len(labels)) + i * height
        means = np.array([sub[metric].get(lab, np.nan) for lab in labels], dtype=float)
        low = np.array([sub[f"{metric}_ci_low"].get(lab, np.nan) for lab in labels], dtype=float)
        high = np.array([sub[f"{metric}_ci_high"].get(lab, np.nan) for lab in labels], dtype=float)
        err = np.nan_to_num(np.array([means - low, high - means]))
        # A pair without data draws no bar and reads "no data"; a mean of 0 reads 0.00.
        bars = ax.barh(y, np.nan_to_num(means), height=height, xerr=err, label=name, capsize=2)
        ns = [sub["n_units"].get(lab, 0) for lab in labels] if "n_units" in sub else None
        label_bars(ax, bars, means, ns, horizontal=True, fontsize=6)
    ax.set_yticks(np.arange(len(labels)) + 0.4 - height / 2, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.35)  # room for the value labels
    ax.set_xlabel(f"mean {METRICS[metric][0]} (published view, 95% CI over notes)")
    ax.set_title(title, fontsize=9)
    scored = df[metric].notna() if len(df) else pd.Series(dtype=bool)
    n_scored = int(df.loc[scored, "n_units"].sum()) if len(df) else 0
    note_empty(ax, n_scored, int(df["n_unscored"].sum()) if len(df) else 0, "units")
    legend_outside(ax)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def write_figures(by_field: pd.DataFrame, by_cancer_type: pd.DataFrame, outputs) -> None:
    """Figure 3 (per pair) and Figure S2 (per pair and cancer type) of every metric, each to
    ``outputs[figure_name(...)]``."""
    for metric, (_, title) in METRICS.items():
        figure3(by_field, metric, outputs[figure_name("figure3", metric)], f"CORAL: {title}")
        figure3(
            by_cancer_type,
            metric,
            outputs[figure_name("figureS2", metric)],
            f"CORAL: {title} by cancer type",
            series=("model", "cancer_type"),
        )


def metadata_from_items(items: list[dict]) -> pd.DataFrame:
    cols = ["doc_id", "cancer_type", "gender", "race_ethnicity", "age_group"]
    return pd.DataFrame([{c: item.get(c, "") for c in cols} for item in items], columns=cols)


def build_tables(
    scores: dict[str, pd.DataFrame], metadata: pd.DataFrame, settings: BootstrapSettings
) -> dict[str, tuple[pd.DataFrame, str, list[str]]]:
    """Table name -> (table, title, notes), for every table of the study."""
    with_type = {
        m: df.merge(metadata[["doc_id", "cancer_type"]], on="doc_id", how="left").fillna(
            {"cancer_type": ""}
        )
        for m, df in scores.items()
    }
    view_notes = [
        *VIEW_NOTES,
        interval_note(
            "note (its fields averaged within it)",
            "the note's patient (metadata patient_id; a note without one is its own)",
            "n_notes, in n_clusters clusters",
            settings,
        ),
    ]
    kw_note = (
        "Kruskal-Wallis H across groups of unit scores (published view); q: Benjamini-Hochberg "
        "over all tests of the table; tests with fewer than two groups or constant values have "
        "no p-value."
    )
    return {
        "overall": (summarise(scores, [], settings), "Overall scores per model", view_notes),
        "by_field": (
            summarise(scores, ["task", "subtype", "field", "label"], settings),
            "Scores per (entity, related entity) pair (Figure 3)",
            view_notes,
        ),
        "by_task": (
            summarise(scores, ["task", "subtype"], settings),
            "Scores per prompt subtype (all its pairs)",
            view_notes,
        ),
        "by_cancer_type": (
            summarise(with_type, ["cancer_type", "subtype", "field", "label"], settings),
            "Scores per pair and cancer type (Figure S2)",
            view_notes,
        ),
        "kruskal_gender": (
            kruskal_table(scores, metadata, "gender"),
            "Kruskal-Wallis tests across gender (Table S2)",
            [kw_note],
        ),
        "kruskal_race": (
            kruskal_table(scores, metadata, "race_ethnicity"),
            "Kruskal-Wallis tests across race/ethnicity (Table S3)",
            [kw_note],
        ),
    }
