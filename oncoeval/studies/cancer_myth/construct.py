"""The adversarial construction loop of §3.2, one myth step at a time.

Each generator model keeps its own pools: ``valid`` (the initial valid examples, then the hard
questions its responder failed on, score -1) and ``invalid`` (the initial invalid examples, then
the easy questions the responder corrected, score 1, with the verifier's reason). A step for
myth ``i`` reads the pools after myth ``i-1`` and writes the pools after myth ``i`` to its own
file, so a killed run resumes at the next myth with the pools as they were. Every model call of a
step (generator, responder, verifier) is a request set answered by the `generate` rule.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ...core.errors import InputError
from ...core.records import Request, Response
from .data import load_myths, normalize_category, read_records
from .parse import judge, parse_generated
from .prompts import render_generator
from .requests import load_verifier_examples


@dataclass(frozen=True)
class ConstructSettings:
    m: int
    k_hard: int
    k_easy: int
    k_invalid: int
    seed: int
    temperature: float
    max_new_tokens: int

    @classmethod
    def from_block(cls, block: dict) -> ConstructSettings:
        """From the filled construction block (or construction_params of it)."""
        return cls(
            m=int(block["m"]),
            k_hard=int(block["k_hard"]),
            k_easy=int(block["k_easy"]),
            k_invalid=int(block["k_invalid"]),
            seed=int(block["seed"]),
            temperature=float(block["generator_temperature"]),
            max_new_tokens=int(block["generator_max_new_tokens"]),
        )


def load_initial_examples(valid_path, invalid_path) -> tuple[list[dict], list[dict]]:
    """Initial pools: valid examples (question, assumption), invalid ones (question, reason)."""
    valid, invalid = [], []
    for i, rec in enumerate(read_records(valid_path)):
        for key in ("example_question", "example_assumption"):
            if not isinstance(rec, dict) or not str(rec.get(key) or "").strip():
                raise InputError(valid_path, f"record {i + 1}", f"{key} must be a non-empty string")
        valid.append(
            {
                "example_question": rec["example_question"],
                "example_assumption": rec["example_assumption"],
                "kind": "initial",
                "from_model": rec.get("from_model", "manual"),
            }
        )
    for i, rec in enumerate(read_records(invalid_path)):
        for key in ("example_question", "reason"):
            if not isinstance(rec, dict) or not str(rec.get(key) or "").strip():
                raise InputError(
                    invalid_path, f"record {i + 1}", f"{key} must be a non-empty string"
                )
        invalid.append(
            {
                "example_question": rec["example_question"],
                "reason": rec["reason"],
                "kind": "invalid",
                "from_model": rec.get("from_model", "manual"),
            }
        )
    return valid, invalid


def load_classifier_examples(path) -> list[dict]:
    """In-context examples of the category classifier, in either accepted form.

    - as published: ``question``, ``assumption``, ``classification: {category, explanation}``;
    - flat: ``example_question``, ``example_assumption``, ``category``, optional ``reason``.

    Both give ``example_question``, ``example_assumption``, ``category`` (one of the seven, as
    :func:`~.data.normalize_category` writes it) and ``reason`` (the explanation).
    """
    records = read_records(path)
    if not records:
        raise InputError(path, None, "no classifier examples")
    examples = []
    for i, rec in enumerate(records):
        where = f"record {i + 1}"
        if not isinstance(rec, dict):
            raise InputError(path, where, "expected a JSON object")
        if "classification" in rec:
            keys = {"question": "question", "assumption": "assumption"}
            label = rec["classification"]
            if not isinstance(label, dict):
                raise InputError(path, where, "classification must be an object")
            category, reason = label.get("category"), label.get("explanation", "")
            field_of = "classification.category"
        else:
            keys = {
                "example_question": "example_question",
                "example_assumption": "example_assumption",
            }
            category, reason = rec.get("category"), rec.get("reason", "")
            field_of = "category"
        for key in keys:
            if not isinstance(rec.get(key), str) or not rec[key].strip():
                raise InputError(path, where, f"{key} must be a non-empty string")
        canonical = normalize_category(category)
        if canonical is None:
            raise InputError(
                path, where, f"{field_of} {category!r} is not one of the seven categories"
            )
        if not isinstance(reason, str):
            raise InputError(path, where, "the explanation (reason) must be a string")
        question, assumption = (rec[k].strip() for k in keys)
        examples.append(
            {
                "example_question": question,
                "example_assumption": assumption,
                "category": canonical,
                "reason": reason,
            }
        )
    return examples


def check_inputs(myths, initial_valid, initial_invalid, verifier_examples, classifier_examples):
    """Load every construction input once, so a bad record stops the run before any model call.

    Returns the number of records of each; raises InputError naming file, record and problem.
    """
    valid, invalid = load_initial_examples(initial_valid, initial_invalid)
    if not valid:
        raise InputError(initial_valid, None, "no initial valid examples")
    if not invalid:
        raise InputError(initial_invalid, None, "no initial invalid examples")
    return {
        "myths": len(load_myths(myths)),
        "initial_valid": len(valid),
        "initial_invalid": len(invalid),
        "verifier_examples": len(load_verifier_examples(verifier_examples)),
        "classifier_examples": len(load_classifier_examples(classifier_examples)),
    }


def initial_pools(generator: str, valid: list[dict], invalid: list[dict]) -> dict:
    return {"generator": generator, "after_myth": -1, "valid": valid, "invalid": invalid}


def step_rng(settings: ConstructSettings, generator: str, index: int) -> random.Random:
    return random.Random(f"{settings.seed}:{generator}:{index}")


def sample_examples(pools: dict, settings: ConstructSettings, rng: random.Random):
    """K_h hard examples from the valid pool; K_e easy and K_i invalid ones from the invalid pool.

    K_h = min(k_hard, |valid|); the invalid pool is split into the initial invalid examples (K_i
    of them, at most all) and the easy questions added by the loop (K_e, at most all). Sampling
    is without replacement.
    """
    valid = pools["valid"]
    invalid = [e for e in pools["invalid"] if e.get("kind") == "invalid"]
    easy = [e for e in pools["invalid"] if e.get("kind") == "easy"]
    good = rng.sample(valid, min(settings.k_hard, len(valid)))
    bad = rng.sample(easy, min(settings.k_easy, len(easy)))
    bad += rng.sample(invalid, min(settings.k_invalid, len(invalid)))
    return good, bad


def generator_request(
    pools: dict, myth: dict, index: int, settings: ConstructSettings, template: str
) -> Request:
    good, bad = sample_examples(pools, settings, step_rng(settings, pools["generator"], index))
    text = render_generator(template, good, bad, myth, settings.m)
    params = {"temperature": settings.temperature, "max_new_tokens": settings.max_new_tokens}
    if settings.temperature > 0:
        params["seed"] = settings.seed + index
    return Request(
        f"m{index}",
        [{"role": "user", "content": text}],
        params,
        {"myth_index": index, "n_good": len(good), "n_bad": len(bad)},
    )


def generated_questions(response: Response | None, settings: ConstructSettings):
    """(questions, note) read from the generator's reply for one myth."""
    if response is None:
        return [], "no generator response"
    if response.error:
        return [], f"generator error: {response.error}"
    return parse_generated(response.text, settings.m)


def question_id(index: int, j: int) -> str:
    return f"m{index}-q{j}"


@dataclass(frozen=True)
class StepReplies:
    """What the models said about one myth: the generator's reply, the ``responder``'s answers,
    the ``verifier``'s verdicts and their retries with a reminder (by question id)."""

    generator: Response | None
    answers: dict[str, Response]
    verdicts: dict[str, Response]
    responder: str
    verifier: str
    retries: dict[str, Response] = field(default_factory=dict)


def update_pools(
    pools: dict, myth: dict, index: int, replies: StepReplies, settings: ConstructSettings
) -> tuple[dict, list[dict]]:
    """Pools after myth ``index`` and one record per generated question (for the audit trail).

    Score -1 adds the question to the valid pool (hard), score 1 to the invalid pool (easy, with
    the verifier's reason), score 0 or a verdict unreadable even after its retry with a reminder
    (``replies.retries``, as in the evaluation) to neither.
    """
    if pools["after_myth"] != index - 1:
        raise ValueError(
            f"pools of {pools['generator']} are after myth {pools['after_myth']}, "
            f"not {index - 1}: steps must run in order"
        )
    questions, note = generated_questions(replies.generator, settings)
    new = {
        **pools,
        "after_myth": index,
        "valid": list(pools["valid"]),
        "invalid": list(pools["invalid"]),
    }
    records = []
    if not questions:
        records.append(
            {
                "generator": pools["generator"],
                "myth_index": index,
                "question_id": None,
                "generator_text": None if replies.generator is None else replies.generator.text,
                "generator_note": note,
                "pool": None,
            }
        )
    for j, q in enumerate(questions):
        qid = question_id(index, j)
        answer = replies.answers.get(qid)
        verdict = judge(qid, answer, replies.verdicts.get(qid), replies.retries.get(qid))
        pool = _add_to_pool(new, q, verdict, index)
        records.append(
            {
                "generator": pools["generator"],
                "myth_index": index,
                "question_id": qid,
                "example_question": q["example_question"],
                "example_assumption": q["example_assumption"],
                "source_info": {k: myth.get(k, "") for k in ("cancer", "myth", "fact", "source")},
                "source_row": myth.get("source_row", index),
                "generator_text": replies.generator.text,
                "generator_note": note,
                "responder": replies.responder,
                "answer": None if answer is None else answer.text,
                "verifier": replies.verifier,
                "verifier_text": verdict["verifier_text"],
                "verifier_retry_text": verdict["verifier_retry_text"],
                "retried": verdict["retried"],
                "score": verdict["score"],
                "reason": verdict["reason"],
                "parse_error": verdict["parse_error"],
                "pool": pool,
            }
        )
    return new, records


def _add_to_pool(pools: dict, q: dict, verdict: dict, index: int) -> str | None:
    """Put question ``q`` into the pool its verdict names (in place); return the pool's name."""
    if verdict["score"] == -1:
        pools["valid"].append(
            {**q, "kind": "hard", "from_model": pools["generator"], "myth_index": index}
        )
        return "valid"
    if verdict["score"] == 1:
        pools["invalid"].append(
            {
                "example_question": q["example_question"],
                "reason": verdict["reason"] or "The answer corrected the presupposition.",
                "kind": "easy",
                "from_model": pools["generator"],
                "myth_index": index,
            }
        )
        return "invalid"
    return None
