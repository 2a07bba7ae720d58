"""One study's model comparison (the ``compare_models`` rule): its headline measures and per-unit
values read from its declaration (``oncoeval.studies.contract.Study``), compared by the
interval engine (``oncoeval.stats.compare``), written as model_comparison.{tsv,md} and
leaderboard.{tsv,md} with their notes."""

from __future__ import annotations

import pandas as pd

from ..core.io import write_table
from ..stats.compare import (
    COMPARISON_COLUMNS,
    CompareSettings,
    Measure,
    comparison_table,
    family_size,
    finish_rows,
    leaderboard,
    mdd_sentences,
    verdict_note,
)
from ..studies import contract


def study_measures(study: str) -> list[Measure]:
    """The study's headline measures that have per-unit values (``Headline.per_unit``), with
    their declared kind and range; the primary one is the headline declared ``primary`` (else
    the first compared one)."""
    heads = [h for h in contract.study(study).headlines if h.per_unit]
    primary = next((h.measure for h in heads if getattr(h, "primary", False)), None)
    primary = primary or (heads[0].measure if heads else None)
    return [Measure(h.measure, h.kind, tuple(h.scale), h.measure == primary) for h in heads]


def study_unit_scores(study: str, score_paths: dict, inputs: dict) -> dict[str, pd.DataFrame]:
    """model -> the study's per-unit values of that model (its ``unit_scores``)."""
    declared = contract.study(study)
    return {m: declared.unit_scores(path, inputs) for m, path in score_paths.items()}


def notes(study: str, settings: CompareSettings, skipped, extra=(), measures=(), m=1) -> list[str]:
    """The Markdown notes of both tables: unit, cluster, methods and why."""
    declared = contract.study(study)
    r = declared.resampling
    level = f"{settings.level:.0%}"
    primary = next((x.name for x in measures if x.primary), None)
    out = [
        f"Resampling unit: {r.unit}; cluster: {r.cluster} (every interval and test resamples or "
        "permutes whole clusters; a unit without a cluster is its own). n_units: the units both "
        "models were scored on (comparison) or the model was scored on (leaderboard).",
        verdict_note(settings, primary, m),
        "Tests and difference intervals: exact McNemar (binomial on discordant pairs) for a "
        "declared 0/1 outcome of independent units, its interval the Clopper-Pearson interval of "
        "the discordant split times that of the discordant share; else the sign-flip permutation "
        "test of the mean paired difference (whole clusters flipped; exact up to 16 clusters, "
        f"else {settings.permutations} random flips), its interval every shift the test does not "
        "reject. A difference with no spread gets a Wilson bound on G clusters instead of a "
        "point. Rows: every pair of evaluated models (replayed reference sets only where the "
        "config's evaluate lists them).",
        f"Intervals ({level}) of the leaderboard's values: chosen by each measure's declared kind and "
        "range, never by the values a sample holds: Wilson for a 0/1 share of independent "
        "units, else a Wilson-type score interval with the effective n of the cluster-robust SE "
        f"and a t quantile (setting comparisons.interval: {settings.interval}).",
        f"mdd: the smallest true difference the row's own decision detects with "
        f"{settings.power:.0%} power: for exact McNemar from its exact power; for the sign-flip "
        "test, its critical value at the family's level read off the row's own sign vectors "
        "(on whole-unit sums where the values move in whole units) applied to 1,000 resamples "
        "of its clusters at each shift. Or the sentence that no difference can be significant "
        "with its clusters and comparisons.",
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
    -> (comparison rows, leaderboard value rows, notes); those rows are descriptive."""
    declared = contract.study(study)
    measures = study_measures(study)
    scores = study_unit_scores(study, score_paths, inputs)
    comparison = comparison_table(scores, measures, settings)
    skipped = [h.measure for h in declared.headlines if not h.per_unit]
    extra_values, extra_notes = [], []
    hook = declared.corrected_comparison
    if hook is not None:
        rows, extra_values, extra_notes = hook(score_paths, inputs, params or {}, settings)
        if rows:
            more = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
            comparison = pd.concat([comparison, more], ignore_index=True)
        compared = {r["measure"] for r in rows} | {r["measure"] for r in extra_values}
        skipped = [s for s in skipped if s not in compared]
    comparison = finish_rows(comparison, settings)
    board = leaderboard(scores, measures, comparison, settings, extra_values)
    m = family_size(len(scores))
    text = notes(study, settings, skipped, extra_notes, measures, m)
    text += mdd_sentences(comparison, settings)
    if len(scores) < 2:
        text.append("Fewer than two evaluated models: nothing to compare.")
    title = declared.title.split(" (")[0]
    write_table(
        comparison,
        out["comparison"],
        out["comparison_md"],
        f"{title}: paired model comparisons",
        text,
    )
    write_table(board, out["leaderboard"], out["leaderboard_md"], f"{title}: leaderboard", text)
    return comparison, board
