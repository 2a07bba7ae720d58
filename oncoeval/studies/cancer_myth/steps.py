"""One function per workflow step, taking file paths and plain values (scripts stay thin)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ...io import read_jsonl, write_jsonl, write_table
from ...judges.correction import DEFAULT_CORRECTION, CorrectionSettings
from ...records import (
    Request,
    Response,
    read_requests,
    read_responses,
    verdict_problem,
    write_requests,
)
from .balance import balance_by_model
from .construct import (
    ConstructSettings,
    generated_questions,
    generator_request,
    initial_pools,
    load_classifier_examples,
    load_initial_examples,
    question_id,
    update_pools,
)
from .data import CATEGORIES, load_myths, load_questions, read_items, write_items
from .parse import parse_category
from .prompts import read_template, render_classifier
from .verify import (
    VerifierPrompt,
    answer_request,
    build_answer_requests,
    build_retry_requests,
    build_verify_requests,
    judge,
    load_human_scores,
    read_scores,
    score_items,
    write_json,
)

log = logging.getLogger(__name__)


def _by_id(path) -> dict:
    return {r.request_id: r for r in read_responses(path)}


# --- evaluation -------------------------------------------------------------------------------


def prepare(questions_path, items_path) -> None:
    items = load_questions(questions_path)
    write_items(items_path, items)
    log.info("%d questions from %s", len(items), questions_path)


def answer_requests(items_path, out_path, system_prompt, max_new_tokens) -> None:
    write_requests(
        out_path, build_answer_requests(read_items(items_path), system_prompt, max_new_tokens)
    )


def verify_requests(items_path, answers_path, out_path, prompt: VerifierPrompt) -> None:
    items = read_items(items_path)
    requests = build_verify_requests(items, _by_id(answers_path), prompt)
    write_requests(out_path, requests)
    log.info("%d of %d answers sent to the verifier", len(requests), len(items))


def validation_requests(human_path, out_path, prompt: VerifierPrompt) -> None:
    rows = load_human_scores(human_path)
    requests = [
        prompt.request(r["id"], r["example_question"], r["example_assumption"], r["answer"])
        for r in rows
    ]
    write_requests(out_path, requests)


def retry_requests(requests_path, responses_path, reminder_path, out_path) -> None:
    requests = read_requests(requests_path)
    retries = build_retry_requests(requests, _by_id(responses_path), read_template(reminder_path))
    write_requests(out_path, retries)
    log.info("%d of %d verifier replies retried with a reminder", len(retries), len(requests))


def _listed(value) -> list:
    return [value] if isinstance(value, str | Path) else list(value)


def score(
    items_path,
    answers_path,
    first_path,
    retry_path,
    verifier,
    scores_path,
    judged_path,
    combine="majority",
):
    """Per-question scores; ``verifier``/``first_path``/``retry_path`` may list a jury."""
    items = read_items(items_path)
    jury, firsts, retries = _listed(verifier), _listed(first_path), _listed(retry_path)
    if len(jury) == 1:
        judged, df = score_items(
            items, _by_id(answers_path), _by_id(firsts[0]), _by_id(retries[0]), jury[0]
        )
    else:
        from .jury import jury_score_items

        judged, df = jury_score_items(
            items,
            _by_id(answers_path),
            [_by_id(p) for p in firsts],
            [_by_id(p) for p in retries],
            jury,
            combine,
        )
    write_jsonl(judged_path, judged)
    Path(scores_path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(scores_path, sep="\t", index=False)
    log.info(
        "%d scored, %d unscored (%d retried)",
        df["score"].notna().sum(),
        df["score"].isna().sum(),
        df["retried"].sum(),
    )


def tables(
    score_paths: dict,
    out: dict,
    settings,
    correction: str,
    validation_path=None,
    judge_correction: CorrectionSettings = DEFAULT_CORRECTION,
    own_verifier: dict | None = None,
) -> None:
    """pcs_pcr, pcs_by_category, pcs_by_generator, pairwise (TSV + MD) and the three figures.

    With ``validation_path`` (the verifier's readable verdicts on human-scored answers), the
    PCS/PCR tables show the corrected rates next to the raw ones, except for the models judged
    by a verifier of their own (``own_verifier``: model -> verifier).
    """
    from . import figures, metrics  # heavy imports only where tables are made

    scores = {model: read_scores(path) for model, path in score_paths.items()}
    validation = read_validation_pairs(validation_path) if validation_path else None
    note = (
        "PCS: mean verifier score (-1/0/1); PCR: share of score 1; over scored questions only. "
        "n_unscored: questions whose answer or verifier reply could not be scored. "
        f"Bootstrap {settings.ci:.0%} CI over questions ({settings.n_resamples} resamples, "
        f"seed {settings.seed})."
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
        by_cat, out["by_category"], out["by_category_md"], "Cancer-Myth: PCS by category", notes
    )
    by_gen = metrics.generator_table(scores, settings, **correct)
    write_table(
        by_gen,
        out["by_generator"],
        out["by_generator_md"],
        "Cancer-Myth: PCS by generator x responder",
        notes + ["Questions written by hand (`manual`) are left out, as in Figure 6b."],
    )
    pairs = metrics.pairwise_table(scores, settings, correction)
    if "jury" in out:
        from .jury import jury_agreement_table

        write_table(
            jury_agreement_table(scores),
            out["jury"],
            out["jury_md"],
            "Cancer-Myth: agreement between the verifier's jurors",
            [
                "Fleiss' kappa over the questions every juror scored; n_tie: questions left "
                "unscored because the jurors' majority was tied. One juror: no jury."
            ],
        )
    write_table(
        pairs,
        out["pairwise"],
        out["pairwise_md"],
        "Cancer-Myth: paired model comparisons",
        [
            "On the questions both models were scored on. pcs_diff = PCS(a) - PCS(b) with a "
            "paired bootstrap CI; pcr_p_value: exact McNemar test (binomial on discordant "
            f"pairs), adjusted across pairs with {correction}.",
        ]
        + (["Only one model: no pairs."] if len(scores) < 2 else []),
    )
    figures.overall_figure(overall, out["fig_overall"])
    figures.category_figure(by_cat, out["fig_category"])
    figures.generator_figure(by_gen, out["fig_generator"])


def correction_note(validation, judge_correction: CorrectionSettings) -> str:
    if validation is None:
        return "*_corrected: no judge validation, so no corrected rates (set human_scores)."
    return (
        "*_corrected: the same rate corrected for the verifier's errors on "
        f"{len(validation[0])} human-scored answers (PCR: Rogan-Gladen on score 1 vs not; PCS: "
        "the 3x3 confusion matrix inverted, constrained to valid shares). Their CIs resample "
        "both the questions and the validation answers. A correction needs at least "
        f"{judge_correction.min_labels_per_class} human labels per score and a verifier better "
        "than chance; otherwise the cell gives the reason. It assumes the verifier errs on these "
        "questions as it does on the validation answers."
    )


VALIDATION_PAIR_COLUMNS = ["id", "human_score", "verifier_score", "parse_error"]


def read_validation_pairs(path):
    """(human scores, verifier scores) of the validation answers the verifier scored."""
    import pandas as pd

    df = pd.read_csv(path, sep="\t", dtype={"id": str}, keep_default_na=False)
    scored = df[df["verifier_score"].astype(str) != ""]
    return (
        scored["human_score"].astype(int).to_numpy(),
        scored["verifier_score"].astype(float).to_numpy(),
    )


def judge_validation(
    human_path,
    first_path,
    retry_path,
    verifier,
    settings,
    tsv,
    md,
    confusion_tsv,
    confusion_md,
    pairs_tsv=None,
    per_class_tsv=None,
    per_class_md=None,
    combine="majority",
    adjudicated=None,
    judged_paths=(),
):
    import numpy as np

    from ...judges import agreement
    from . import metrics

    rows = load_human_scores(human_path)
    jury = _listed(verifier)
    firsts = [_by_id(p) for p in _listed(first_path)]
    retries = [_by_id(p) for p in _listed(retry_path)]
    if len(jury) == 1:
        verdicts = [
            judge(r["id"], _answer(r), firsts[0].get(r["id"]), retries[0].get(r["id"]))
            for r in rows
        ]
    else:
        from .jury import jury_reading

        verdicts = [jury_reading(r["id"], _answer(r), firsts, retries, combine) for r in rows]
    verifier = "+".join(jury)
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
    summary, confusion = metrics.judge_agreement(human, verifier_scores, settings, verifier)
    kappa = agreement.kappa_with_ci(human, verifier_scores, metrics.SCORES, settings)
    where = summary.columns.get_loc("cohen_kappa") + 1
    summary.insert(where, "cohen_kappa_ci_high", kappa[2])
    summary.insert(where, "cohen_kappa_ci_low", kappa[1])
    if per_class_tsv:
        write_table(
            agreement.per_class_table(human, verifier_scores, metrics.SCORES, settings),
            per_class_tsv,
            per_class_md,
            "Cancer-Myth: verifier sensitivity and specificity per human score",
            [
                "Each score against the other two, over the answers the verifier scored: "
                "sensitivity = P(verifier gives s | human gave s), specificity = P(verifier does "
                "not give s | human did not). Bootstrap CIs over the answers of each group."
            ],
        )
    if pairs_tsv:
        import pandas as pd

        pairs = pd.DataFrame(
            [
                {
                    "id": r["id"],
                    "human_score": r["human_score"],
                    "verifier_score": "" if v["score"] is None else v["score"],
                    "parse_error": v["parse_error"],
                }
                for r, v in zip(rows, verdicts, strict=True)
            ],
            columns=VALIDATION_PAIR_COLUMNS,
        )
        write_table(pairs, pairs_tsv)
    notes = [
        f"Verifier {verifier} against {len(rows) - len(labelled)} human scores from {human_path}"
        + (f" and {len(labelled)} adjudicated answers from {adjudicated}" if labelled else "")
        + (
            " (jury mean rounded to the nearest score)"
            if len(jury) > 1 and combine == "mean"
            else ""
        )
        + ". "
        "Binary agreement collapses -1/0 vs 1; unreadable verifier replies are counted in "
        "n_unscored and left out of the agreement figures."
    ]
    write_table(summary, tsv, md, "Cancer-Myth: verifier agreement with human scores", notes)
    write_table(
        confusion,
        confusion_tsv,
        confusion_md,
        "Cancer-Myth: verifier vs human confusion matrix",
        ["Rows: human score; columns: verifier score (verifier_unscored: no readable score)."],
    )


def adjudication_sheet(judged_paths: dict, sheet_path, key_path, max_items, seed) -> None:
    """The blinded sheet of the answers whose verdicts are least certain, and its key."""
    from ...judges import adjudication

    judged = {model: read_jsonl(path) for model, path in judged_paths.items()}
    chosen = adjudication.select(judged, int(max_items), int(seed))
    adjudication.write_sheet(chosen, "human_score", sheet_path, key_path)
    log.info("%d answers on the adjudication sheet", len(chosen))


def adjudicated_labels(sheet_path, judged_paths: dict) -> list[dict]:
    """Labels of a filled adjudication sheet, each with the verifier's verdict on that answer."""
    from ...judges.adjudication import blind_id, read_filled_sheet
    from .parse import VALID_SCORES

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


# --- construction -----------------------------------------------------------------------------


def construct_myths(myths_path, out_path, max_myths) -> None:
    myths = load_myths(myths_path)
    if max_myths:
        myths = myths[: int(max_myths)]
    write_jsonl(out_path, myths)


def construct_init(valid_path, invalid_path, generator, out_path) -> None:
    valid, invalid = load_initial_examples(valid_path, invalid_path)
    write_json(out_path, initial_pools(generator, valid, invalid))


def _myth(myths_path, index: int) -> dict:
    return read_jsonl(myths_path)[index]


def construct_generate_requests(pools_path, myths_path, template_path, index, block, out_path):
    pools = json.loads(Path(pools_path).read_text(encoding="utf-8"))
    settings = ConstructSettings.from_block(block)
    request = generator_request(
        pools, _myth(myths_path, index), index, settings, read_template(template_path)
    )
    write_requests(out_path, [request])


def construct_respond_requests(
    generator_responses, index, block, system_prompt, max_new_tokens, out_path
):
    settings = ConstructSettings.from_block(block)
    responses = read_responses(generator_responses)
    questions, note = generated_questions(responses[0] if responses else None, settings)
    if note:
        log.info("myth %d: %s", index, note)
    write_requests(
        out_path,
        [
            answer_request(
                question_id(index, j),
                q["example_question"],
                system_prompt,
                max_new_tokens,
                meta={**q, "myth_index": index},
            )
            for j, q in enumerate(questions)
        ],
    )


def construct_verify_requests(answers_path, prompt: VerifierPrompt, out_path):
    requests = []
    for resp in read_responses(answers_path):
        if resp.error or not (resp.text or "").strip():
            continue
        meta = resp.meta or {}
        requests.append(
            prompt.request(
                resp.request_id,
                meta["example_question"],
                meta["example_assumption"],
                resp.text,
                meta=meta,
            )
        )
    write_requests(out_path, requests)


def construct_update(
    pools_path,
    myths_path,
    generator_responses,
    answers_path,
    verdicts_path,
    retry_path,
    index,
    block,
    responder,
    verifier,
    out_pools,
    out_steps,
):
    pools = json.loads(Path(pools_path).read_text(encoding="utf-8"))
    gen = read_responses(generator_responses)
    new, records = update_pools(
        pools,
        _myth(myths_path, index),
        index,
        gen[0] if gen else None,
        _by_id(answers_path),
        _by_id(verdicts_path),
        ConstructSettings.from_block(block),
        responder,
        verifier,
        retries=_by_id(retry_path),
    )
    write_jsonl(out_steps, records)
    write_json(out_pools, new)
    log.info(
        "myth %d: %d question(s); pools now %d valid, %d invalid",
        index,
        sum(r["question_id"] is not None for r in records),
        len(new["valid"]),
        len(new["invalid"]),
    )


def construct_collect(step_paths, out_generated, out_candidates) -> None:
    """Every generated question (raw generations) and the hard ones (score -1) as candidates."""
    rows = [r for path in step_paths for r in read_jsonl(path)]
    write_jsonl(out_generated, rows)
    candidates = []
    for r in rows:
        if r.get("score") == -1:
            candidates.append(
                {
                    "example_question": r["example_question"],
                    "example_assumption": r["example_assumption"],
                    "source_row": r["source_row"],
                    "source_type": "myth",
                    "source_info": r["source_info"],
                    "from_model": r["generator"],
                    "raw_QID": len(candidates),
                }
            )
    write_jsonl(out_candidates, candidates)


def construct_categorize_requests(
    candidates_path, template, example_template, examples_path, max_new_tokens, out_path
):
    examples = load_classifier_examples(examples_path)
    tpl, ex_tpl = read_template(template), read_template(example_template)
    requests = []
    for c in read_jsonl(candidates_path):
        text = render_classifier(
            tpl, ex_tpl, examples, c["example_question"], c["example_assumption"]
        )
        requests.append(
            Request(
                str(c["raw_QID"]),
                [{"role": "user", "content": text}],
                {"temperature": 0.0, "max_new_tokens": int(max_new_tokens)},
            )
        )
    write_requests(out_path, requests)


def construct_dataset(
    candidates_path,
    classifier_responses,
    classifier,
    block,
    out_categories,
    out_dataset,
    out_summary,
):
    """Categories from the classifier, then Algorithm 1 per generator, in the published format."""
    verdicts = _by_id(classifier_responses)
    categorized = []
    for c in read_jsonl(candidates_path):
        resp = verdicts.get(str(c["raw_QID"]))
        problem = verdict_problem(resp)
        if problem is not None:
            category, error = None, f"classifier {problem}"
        else:
            category, error = parse_category(resp.text)
        categorized.append(
            {
                **c,
                "category": category or "",
                "category_error": error,
                "classifier": classifier,
                "classifier_text": None if resp is None else resp.text,
            }
        )
    write_jsonl(out_categories, categorized)
    usable = [c for c in categorized if c["category"]]
    selected = balance_by_model(
        usable,
        int(block.get("select_per_model", 300)),
        int(block.get("select_per_category", 50)),
        CATEGORIES,
        int(block.get("seed", 0)),
    )
    keys = (
        "example_question",
        "example_assumption",
        "source_row",
        "source_type",
        "source_info",
        "category",
        "from_model",
        "raw_QID",
    )
    dataset = [{k: c[k] for k in keys} for c in selected]
    write_json(out_dataset, dataset)
    import pandas as pd

    summary = pd.DataFrame(
        [
            {
                "generator": g,
                "category": cat,
                "candidates": sum(
                    1 for c in usable if c["from_model"] == g and c["category"] == cat
                ),
                "selected": sum(
                    1 for c in dataset if c["from_model"] == g and c["category"] == cat
                ),
            }
            for g in sorted({c["from_model"] for c in categorized})
            for cat in CATEGORIES
        ],
        columns=["generator", "category", "candidates", "selected"],
    )
    n_uncat = len(categorized) - len(usable)
    write_table(
        summary,
        out_summary,
        None,
    )
    log.info(
        "%d candidates, %d uncategorised, %d selected", len(categorized), n_uncat, len(dataset)
    )
