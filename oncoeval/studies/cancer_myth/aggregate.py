"""Aggregate: the scores of every evaluated model -> PCS/PCR tables and figures; the verifier's
agreement with human scores (judge validation); the blinded adjudication sheet."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.io import read_jsonl, write_table
from ...core.records import Response
from ...judges import adjudication, agreement
from ...judges.adjudication import blind_id, read_filled_sheet
from ...judges.correction import DEFAULT_CORRECTION, CorrectionSettings, Validation
from ...stats.compare import METHOD_NAMES, as_compare_settings, interval_note
from . import figures, metrics
from .jury import jury_agreement_table
from .parse import VALID_SCORES, judge, jury_reading, responses_by_id
from .requests import load_human_scores
from .score import read_scores

log = logging.getLogger(__name__)


def _listed(value) -> list:
    return [value] if isinstance(value, str | Path) else list(value)


def aggregate(
    score_paths: dict,
    out: dict,
    settings,
    validation_path=None,
    judge_correction: CorrectionSettings = DEFAULT_CORRECTION,
    own_verifier: dict | None = None,
) -> None:
    """pcs_pcr, pcs_by_category, pcs_by_generator (TSV + MD) and the three figures (the paired
    comparisons between models: oncoeval.stats.compare, rules/compare.smk).

    With ``validation_path`` (the verifier's readable verdicts on human-scored answers), the
    PCS/PCR tables show the corrected rates next to the raw ones, except for the models judged
    by a verifier of their own (``own_verifier``: model -> verifier).
    """
    scores = {model: read_scores(path) for model, path in score_paths.items()}
    validation = read_validation_pairs(validation_path) if validation_path else None
    note = (
        "PCS: mean verifier score (-1/0/1); PCR: share of score 1; over scored questions only. "
        "n_unscored: questions whose answer or verifier reply could not be scored. "
        + interval_note(
            "question",
            "the source record (myth) it was written from (a hand-written question, "
            "source_row -1, has none)",
            "the n column (questions scored), in n_clusters clusters",
            settings,
        )
    )
    correct = {
        "validation": validation,
        "correction": judge_correction,
        "own_verifier": own_verifier,
    }
    notes = [note, correction_note(validation, judge_correction)]
    overall = metrics.overall_table(scores, settings, **correct)
    write_table(overall, out["pcs_pcr"], out["pcs_pcr_md"], "Cancer-Myth: PCS and PCR", notes)
    by_cat = metrics.category_table(scores, settings, **correct)
    write_table(
        by_cat,
        out["pcs_by_category"],
        out["pcs_by_category_md"],
        "Cancer-Myth: PCS by category",
        notes,
    )
    by_gen = metrics.generator_table(scores, settings, **correct)
    write_table(
        by_gen,
        out["pcs_by_generator"],
        out["pcs_by_generator_md"],
        "Cancer-Myth: PCS by generator x responder",
        notes + ["Questions written by hand (`manual`) are left out, as in Figure 6b."],
    )
    write_table(
        jury_agreement_table(scores),
        out["jury_agreement"],
        out["jury_agreement_md"],
        "Cancer-Myth: agreement between the verifier's jurors",
        [
            "Fleiss' kappa over the questions every juror scored; n_tie: questions left "
            "unscored because the jurors' votes split evenly. One juror: no jury."
        ],
    )
    figures.overall_figure(overall, out["pcs_pcr_figure"], figure_interval(settings))
    figures.category_figure(by_cat, out["pcs_by_category_figure"])
    figures.generator_figure(by_gen, out["pcs_by_generator_figure"])


def correction_note(validation, judge_correction: CorrectionSettings) -> str:
    if validation is None:
        return "*_corrected: no judge validation, so no corrected rates (set human_scores)."
    return (
        "*_corrected: the same rate corrected for the verifier's errors on "
        f"{len(validation[0])} human-scored answers"
        + (
            " drawn by the review plan, weighted by 1 / inclusion probability"
            if getattr(validation, "weights", None) is not None
            else ""
        )
        + " (PCR: Rogan-Gladen on score 1 vs not; PCS: "
        "the 3x3 confusion matrix inverted, constrained to valid shares). Their CIs: percentile "
        "joint bootstrap, each draw resampling the questions in whole clusters (source records) "
        "and the validation answers. A correction needs at least "
        f"{judge_correction.min_labels_per_class} human labels per score and a verifier better "
        "than chance; otherwise the cell gives the reason. It assumes the verifier errs on these "
        "questions as it does on the validation answers."
    )


# inclusion_probability: set on the answers a review plan drew (oncoeval.review.plan).
VALIDATION_PAIR_COLUMNS = [
    "id", "human_score", "verifier_score", "parse_error", "inclusion_probability",
]  # fmt: skip


def read_validation_pairs(path) -> Validation:
    """(human scores, verifier scores) of the validation answers the verifier scored.

    Where a review plan drew some of them (an ``inclusion_probability``), only those correct
    the rates, weighted by 1 / inclusion probability; answers labelled otherwise (hand-picked,
    adjudicated) are no random sample and stay out of the correction.
    """
    df = pd.read_csv(path, sep="\t", dtype={"id": str}, keep_default_na=False)
    scored = df[df["verifier_score"].astype(str) != ""]
    planned = scored.get("inclusion_probability", pd.Series("", index=scored.index)).astype(str)
    weights = None
    if (planned != "").any():
        scored = scored[planned != ""]
        weights = 1 / scored["inclusion_probability"].astype(float).to_numpy()
    return Validation(
        scored["human_score"].astype(int).to_numpy(),
        scored["verifier_score"].astype(float).to_numpy(),
        weights,
    )


def judge_validation(
    inputs: dict, out: dict, settings, verifier, combine="majority", judged_paths=()
) -> None:
    """The verifier's agreement with human scores: agreement summary and confusion matrix (TSV +
    MD), and where ``out`` names them, the per-class rates and the per-answer pairs.

    ``inputs``: ``human`` (the human scores), ``first`` and ``retry`` (the verifier's replies,
    one file or one per juror), optional ``adjudicated`` (a filled adjudication sheet, whose
    verdicts come from ``judged_paths``: model -> judged answers). ``out``: the rule's named
    outputs (``judge_agreement``, ``judge_confusion``, their ``_md``, ``judge_per_class``,
    ``judge_per_class_md``, ``verifier_pairs``). ``verifier``: one name or the jury's names.
    """
    human_path, adjudicated = inputs["human"], inputs.get("adjudicated")
    rows = load_human_scores(human_path)
    jury = _listed(verifier)
    verdicts = _verdicts(rows, jury, inputs["first"], inputs["retry"], combine)
    human = [r["human_score"] for r in rows]
    verifier_scores = [np.nan if v["score"] is None else v["score"] for v in verdicts]
    if len(jury) > 1 and combine == "mean":
        # Agreement is counted on scores: a jury's mean verdict is rounded to the nearest one
        # (halves to even, numpy's rule).
        verifier_scores = [float(np.round(v)) for v in verifier_scores]
    labelled = adjudicated_labels(adjudicated, judged_paths) if adjudicated else []
    for lab in labelled:
        rows.append({"id": f"adjudicated:{lab['item']}", "human_score": lab["label"]})
        verdicts.append({"score": lab["score"], "parse_error": lab["parse_error"]})
        human.append(lab["label"])
        verifier_scores.append(np.nan if lab["score"] is None else lab["score"])
    name = "+".join(jury)
    summary, confusion = metrics.judge_agreement(human, verifier_scores, settings, name)
    kappa = agreement.kappa_with_ci(human, verifier_scores, metrics.SCORES, settings)
    where = summary.columns.get_loc("cohen_kappa") + 1
    summary.insert(where, "cohen_kappa_ci_high", kappa[2])
    summary.insert(where, "cohen_kappa_ci_low", kappa[1])
    if out.get("judge_per_class"):
        table = agreement.per_class_table(human, verifier_scores, metrics.SCORES, settings)
        _write_per_class(table, out["judge_per_class"], out.get("judge_per_class_md"), settings)
    if out.get("verifier_pairs"):
        _write_pairs(rows, verdicts, out["verifier_pairs"])
    notes = [
        f"Verifier {name} against {len(rows) - len(labelled)} human scores from {human_path}"
        + (f" and {len(labelled)} adjudicated answers from {adjudicated}" if labelled else "")
        + (
            " (jury mean rounded to the nearest score)"
            if len(jury) > 1 and combine == "mean"
            else ""
        )
        + ". "
        "Binary agreement collapses -1/0 vs 1; unreadable verifier replies are counted in "
        "n_unscored and left out of the agreement figures. "
        + interval_note("validation answer", "validation answer", "n", settings)
        + f" Cohen's kappa: percentile bootstrap over the answers ({settings.n_resamples} "
        f"resamples, seed {settings.seed})."
    ]
    write_table(
        summary,
        out["judge_agreement"],
        out.get("judge_agreement_md"),
        "Cancer-Myth: verifier agreement with human scores",
        notes,
    )
    write_table(
        confusion,
        out["judge_confusion"],
        out.get("judge_confusion_md"),
        "Cancer-Myth: verifier vs human confusion matrix",
        ["Rows: human score; columns: verifier score (verifier_unscored: no readable score)."],
    )


def _verdicts(rows: list[dict], jury: list, first_path, retry_path, combine: str) -> list[dict]:
    """The verifier's (or the jury's combined) verdict on each human-scored answer."""
    firsts = [responses_by_id(p) for p in _listed(first_path)]
    retries = [responses_by_id(p) for p in _listed(retry_path)]
    if len(jury) == 1:
        return [
            judge(r["id"], _answer(r), firsts[0].get(r["id"]), retries[0].get(r["id"]))
            for r in rows
        ]
    return [jury_reading(r["id"], _answer(r), firsts, retries, combine) for r in rows]


def _write_per_class(table: pd.DataFrame, tsv, md, settings) -> None:
    write_table(
        table,
        tsv,
        md,
        "Cancer-Myth: verifier sensitivity and specificity per human score",
        [
            "Each score against the other two, over the answers the verifier scored: "
            "sensitivity = P(verifier gives s | human gave s), specificity = P(verifier does "
            "not give s | human did not). "
            + interval_note(
                "validation answer (of the group: human gave s, or did not)",
                "validation answer",
                "n_class, n_other",
                settings,
            )
        ],
    )


def _write_pairs(rows: list[dict], verdicts: list[dict], tsv) -> None:
    pairs = pd.DataFrame(
        [
            {
                "id": r["id"],
                "human_score": r["human_score"],
                "verifier_score": "" if v["score"] is None else v["score"],
                "parse_error": v["parse_error"],
                "inclusion_probability": r.get("inclusion_probability", ""),
            }
            for r, v in zip(rows, verdicts, strict=True)
        ],
        columns=VALIDATION_PAIR_COLUMNS,
    )
    write_table(pairs, tsv)


def adjudication_sheet(judged_paths: dict, sheet_path, key_path, max_items, seed) -> None:
    """The blinded sheet of the answers whose verdicts are least certain, and its key."""
    judged = {model: read_jsonl(path) for model, path in judged_paths.items()}
    chosen = adjudication.select(judged, int(max_items), int(seed))
    adjudication.write_sheet(chosen, "human_score", sheet_path, key_path)
    log.info("%d answers on the adjudication sheet", len(chosen))


def adjudicated_labels(sheet_path, judged_paths: dict) -> list[dict]:
    """Labels of a filled adjudication sheet, each with the verifier's verdict on that answer."""
    items = {
        blind_id(model, rec["question_id"]): {
            "model": model,
            "question_id": rec["question_id"],
            "score": rec["score"],
            "parse_error": rec["parse_error"],
        }
        for model, path in judged_paths.items()
        for rec in read_jsonl(path)
    }
    return read_filled_sheet(sheet_path, "human_score", VALID_SCORES, items)


def _answer(row):
    return Response(row["id"], "human-scored", row["answer"])


CORRECTED_TEST = "joint bootstrap (clusters of questions and validation answers resampled together)"
CORRECTED_INTERVAL = "percentile joint bootstrap (question clusters and validation answers)"


def corrected_rows(score_paths: dict, validation_path, params: dict, settings, measures: dict):
    """(comparison rows, leaderboard value rows, notes) of the judge-corrected PCS and PCR:
    every pair of models judged by the validated verifier, corrected to corrected with the
    validation set resampled once for both models in each draw
    (oncoeval.judges.correction.corrected_difference). ``measures``: column -> measure name."""
    if not validation_path:
        return (
            [],
            [],
            ["Corrected rates: no judge validation (human_scores not set): not compared."],
        )
    import itertools

    correction = CorrectionSettings.from_config(
        {"judge_correction": params.get("judge_correction")}
    )
    validation = read_validation_pairs(validation_path)
    own = params.get("own_verifier") or {}
    scores = {m: read_scores(p) for m, p in score_paths.items()}
    values = []
    for model, df in scores.items():
        scored = df["score"].dropna().to_numpy()
        clusters = df.loc[df["score"].notna(), "cluster"].tolist() if "cluster" in df else None
        args = metrics.for_model(model, validation, correction, own)
        cells = metrics.corrected_pcs_pcr(
            scored, args["validation"], settings.bootstrap, correction, clusters
        )
        for column, measure in measures.items():
            cell = cells[column]
            number = not isinstance(cell, str)
            values.append(
                {
                    "measure": measure,
                    "model": model,
                    "value": cell if number else float("nan"),
                    "ci_low": cells[f"{column}_ci_low"],
                    "ci_high": cells[f"{column}_ci_high"],
                    "n_units": len(scored),
                    "n_unscored": int(df["score"].isna().sum()),
                    "n_clusters": df.loc[df["score"].notna(), "cluster"].nunique()
                    if "cluster" in df
                    else len(scored),
                    "interval": CORRECTED_INTERVAL if number else f"not corrected: {cell}",
                }
            )
    rows = []
    for column, measure in measures.items():
        for a, b in itertools.combinations(sorted(scores), 2):
            row = {"measure": measure, "model_a": a, "model_b": b, "test": CORRECTED_TEST}
            judged_elsewhere = [m for m in (a, b) if own.get(m)]
            if judged_elsewhere:
                rows.append(
                    row
                    | {
                        "test": f"not compared: {judged_elsewhere[0]} is judged by "
                        f"{own[judged_elsewhere[0]]}, not the validated verifier"
                    }
                )
                continue
            rows.append(
                row
                | _corrected_pair(scores[a], scores[b], column, validation, settings, correction)
            )
    notes = [
        "Corrected rows (PCS/PCR corrected for judge error): each model's rate corrected with "
        f"the verifier's errors on {len(validation[0])} human-scored answers, compared corrected "
        "to corrected: every bootstrap draw resamples the questions' clusters (the same for both "
        "models) and the validation answers once, and corrects both models with that one "
        "confusion matrix; p: twice the smaller share of draws on either side of zero. A model "
        "judged by a verifier of its own is not corrected and not compared.",
    ]
    return rows, values, notes


def _corrected_pair(a, b, column, validation, settings, correction) -> dict:
    from ...judges.correction import corrected_difference

    keep = ["question_id", "score"] + (["cluster"] if "cluster" in a else [])
    joined = a[keep].merge(b[["question_id", "score"]], on="question_id", suffixes=("_a", "_b"))
    joined = joined.dropna(subset=["score_a", "score_b"])
    if joined.empty:
        return {"n_units": 0, "test": "no shared scored questions"}
    clusters = joined["cluster"] if "cluster" in joined else joined["question_id"]
    human, verifier = validation
    x, y = joined["score_a"].to_numpy(), joined["score_b"].to_numpy()
    weights = validation.weights
    if column == "pcr_corrected":
        pair = Validation(human == 1, verifier == 1, weights)
        args = (x == 1, y == 1, clusters, pair, (False, True), None)
    else:
        whole = all(np.isin(v, metrics.SCORES).all() for v in (x, y, verifier))
        if not whole:
            return {"n_units": len(joined), "test": "not compared: verdicts are not -1/0/1"}
        pair = Validation(human.astype(int), verifier.astype(int), weights)
        args = (
            x.astype(int), y.astype(int), clusters, pair,
            metrics.SCORES, lambda shares: float(shares @ np.array(metrics.SCORES)),
        )  # fmt: skip
    out = corrected_difference(*args, settings=settings.bootstrap, correction=correction)
    n = {"n_units": len(joined), "n_clusters": clusters.nunique()}
    if "reason" in out:
        return n | {"test": f"not compared: {out['reason']}"}
    return n | out | {"interval": CORRECTED_INTERVAL}


def figure_interval(settings) -> str:
    """The interval a figure draws from its table, in a few words for its title."""
    s = as_compare_settings(settings)
    if s.interval == "auto":
        return f"{s.level:.0%} CI: Wilson for a 0/1 share, else cluster-robust Student-t"
    return f"{s.level:.0%} CI: {METHOD_NAMES[s.interval]}"
