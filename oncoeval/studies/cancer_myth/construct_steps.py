"""One function per construction step (rules cancer_myth_construct_*), taking file paths and
plain values; the loop itself is in oncoeval.studies.cancer_myth.construct."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from ...core.io import atomic_write, read_jsonl, write_jsonl, write_table
from ...core.records import Request, read_responses, verdict_problem, write_requests
from .balance import balance_by_model
from .construct import (
    ConstructSettings,
    StepReplies,
    generated_questions,
    generator_request,
    initial_pools,
    load_classifier_examples,
    load_initial_examples,
    question_id,
    update_pools,
)
from .data import CATEGORIES, load_myths
from .parse import parse_category, responses_by_id
from .prompts import read_template, render_classifier
from .requests import VerifierPrompt, answer_request

log = logging.getLogger(__name__)


def write_json(path, obj) -> None:
    with atomic_write(path) as handle:
        handle.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


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


def construct_update(inputs: dict, out: dict, index: int, block: dict, responder, verifier):
    """Pools after myth ``index`` (``out["pools"]``) and its records (``out["steps"]``).

    ``inputs``: the rule's named inputs: ``pools`` (after myth ``index`` - 1), ``myths``,
    ``generated`` (the generator's reply), ``answers`` (the responder's), ``verdicts`` and
    ``retry`` (the verifier's). ``block``: the study's construction settings.
    """
    pools = json.loads(Path(inputs["pools"]).read_text(encoding="utf-8"))
    gen = read_responses(inputs["generated"])
    replies = StepReplies(
        gen[0] if gen else None,
        responses_by_id(inputs["answers"]),
        responses_by_id(inputs["verdicts"]),
        responder,
        verifier,
        retries=responses_by_id(inputs["retry"]),
    )
    settings = ConstructSettings.from_block(block)
    new, records = update_pools(pools, _myth(inputs["myths"], index), index, replies, settings)
    write_jsonl(out["steps"], records)
    write_json(out["pools"], new)
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
    verdicts = responses_by_id(classifier_responses)
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
        int(block["select_per_model"]),
        int(block["select_per_category"]),
        CATEGORIES,
        int(block["seed"]),
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
