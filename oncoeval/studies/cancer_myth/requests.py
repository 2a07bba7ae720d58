"""Requests: the responders' answer requests, the verifier's (Figure 13) on answers and on
human-scored answers, and the retry-once-with-reminder set.

An answer whose verifier reply cannot be read (or whose call failed) gets one more request in a
second request set: the same conversation, the verifier's first reply as the assistant turn, and
a reminder of the format. Whatever is still unreadable after that is recorded as ``parse_error``
(oncoeval.studies.cancer_myth.parse) and never counted as a score.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ...core.errors import InputError
from ...core.inputs import check_length, compare_key, is_blank
from ...core.records import Request, Response, read_requests, verdict_problem, write_requests
from ...core.shapes import SHAPE_PARAM, json_schema_shape
from .data import read_items, read_records, require_text
from .parse import VALID_SCORES, answer_problem, parse_verifier, responses_by_id
from .prompts import read_template, render_verifier

log = logging.getLogger(__name__)


def answer_request(
    rid: str, question: str, system_prompt: str | None, max_new_tokens: int, meta=None
) -> Request:
    """Zero-shot: the question is the only user message (plus an optional system prompt)."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": question})
    return Request(
        rid, messages, {"temperature": 0.0, "max_new_tokens": int(max_new_tokens)}, meta or {}
    )


def build_answer_requests(items, system_prompt, max_new_tokens) -> list[Request]:
    return [
        answer_request(it["question_id"], it["question"], system_prompt, max_new_tokens)
        for it in items
    ]


# Tokens a verdict needs besides its reason: braces, keys, quotes, the score, end of text.
VERDICT_OVERHEAD_TOKENS = 24


def verdict_schema(max_new_tokens: int) -> dict:
    """The Figure 13 verdict as a response shape (``structured_verdicts``).

    One JSON object with a reason and the score. The reason is bounded in characters by the
    token limit less the overhead (a token carries at least one character), so an enforced
    verdict is never cut off by ``max_new_tokens`` before its score.
    """
    return {
        "type": "object",
        "properties": {
            "Reason": {
                "type": "string",
                "maxLength": max(16, int(max_new_tokens) - VERDICT_OVERHEAD_TOKENS),
            },
            "Sharpness": {"enum": list(VALID_SCORES)},
        },
        "required": ["Reason", "Sharpness"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class VerifierPrompt:
    template: str
    example_template: str
    examples: list[dict]
    max_new_tokens: int
    structured: bool = False

    @classmethod
    def from_files(
        cls, template, example_template, examples_path, max_new_tokens, structured=False
    ):
        return cls(
            read_template(template),
            read_template(example_template),
            load_verifier_examples(examples_path),
            int(max_new_tokens),
            bool(structured),
        )

    def params(self) -> dict:
        params = {"temperature": 0.0, "max_new_tokens": self.max_new_tokens}
        if self.structured:
            params[SHAPE_PARAM] = json_schema_shape(
                verdict_schema(self.max_new_tokens), "cancer_myth_verdict"
            )
        return params

    def request(self, rid, question, information, answer, meta=None) -> Request:
        text = render_verifier(
            self.template, self.example_template, self.examples, question, information, answer
        )
        return Request(rid, [{"role": "user", "content": text}], self.params(), meta or {})


def is_score(value) -> bool:
    """-1, 0 or 1 as a JSON integer: true, 1.0 and "1" are not scores."""
    return type(value) is int and value in VALID_SCORES


def load_verifier_examples(path) -> list[dict]:
    """Scored in-context examples: question, assumption, answer, score {Reason, Sharpness}."""
    examples = read_records(path)
    for i, ex in enumerate(examples):
        where = f"example {i + 1}"
        if not isinstance(ex, dict):
            raise InputError(path, where, "expected a JSON object")
        require_text(path, where, ex, ("example_question", "example_assumption", "answer"))
        score = ex.get("score")
        if not isinstance(score, dict) or not is_score(score.get("Sharpness")):
            raise InputError(
                path,
                where,
                'score must be {"Reason": ..., "Sharpness": -1|0|1} (an integer; got '
                f"{score.get('Sharpness') if isinstance(score, dict) else score!r})",
            )
    return examples


def load_human_scores(path) -> list[dict]:
    """Human-scored (question, information, answer) triples for judge validation.

    Records: ``id`` (optional), ``example_question``, ``example_assumption``, ``answer``,
    ``human_score`` (-1, 0 or 1), as a JSON list or JSONL; ``inclusion_probability`` (in (0, 1])
    on the answers a review plan drew (oncoeval.review), which weights them in the correction.
    """
    rows, seen = [], set()
    for i, rec in enumerate(read_records(path)):
        where = f"record {i + 1}"
        if not isinstance(rec, dict):
            raise InputError(path, where, "expected a JSON object")
        rid = str(rec.get("id", i))
        check_length(path, where, rid, "id", "id")
        for key in ("example_question", "example_assumption", "answer"):
            if is_blank(rec.get(key)):
                raise InputError(path, f"{where} (id {rid!r})", f"{key} must be a non-empty string")
            check_length(path, f"{where} (id {rid!r})", rec[key], "text", key)
        if not is_score(rec.get("human_score")):
            raise InputError(
                path,
                f"{where} (id {rid!r})",
                f"human_score must be -1, 0 or 1 (an integer; got {rec.get('human_score')!r})",
            )
        p = rec.get("inclusion_probability")
        if p is not None and not (type(p) in (int, float) and 0 < p <= 1):
            raise InputError(
                path,
                f"{where} (id {rid!r})",
                f"inclusion_probability must be a number in (0, 1] (got {p!r})",
            )
        if compare_key(rid) in seen:
            raise InputError(path, f"{where} (id {rid!r})", "duplicate id")
        seen.add(compare_key(rid))
        rows.append({**rec, "id": rid})
    if not rows:
        raise InputError(path, None, "no human-scored records")
    return rows


def build_verify_requests(items, answers: dict[str, Response], prompt: VerifierPrompt):
    """One verifier request per item whose answer exists; the rest are scored as unverifiable."""
    out = []
    for it in items:
        resp = answers.get(it["question_id"])
        if answer_problem(resp):
            continue
        out.append(prompt.request(it["question_id"], it["question"], it["correction"], resp.text))
    return out


def build_retry_requests(requests: list[Request], responses: dict[str, Response], reminder: str):
    """Second chance for every verifier reply that failed or could not be read."""
    out = []
    for req in requests:
        resp = responses.get(req.request_id)
        if verdict_problem(resp) is None and parse_verifier(resp.text).ok:
            continue
        messages = list(req.messages)
        if resp is not None and not resp.error and resp.text:
            messages.append({"role": "assistant", "content": resp.text})
        messages.append({"role": "user", "content": reminder})
        out.append(Request(req.request_id, messages, dict(req.params), dict(req.meta)))
    return out


# --- steps (rules cancer_myth_requests, _verify_requests, _validate_requests, _retry_requests)


def answer_requests(items_path, out_path, system_prompt, max_new_tokens) -> None:
    write_requests(
        out_path, build_answer_requests(read_items(items_path), system_prompt, max_new_tokens)
    )


def verify_requests(items_path, answers_path, out_path, prompt: VerifierPrompt) -> None:
    items = read_items(items_path)
    requests = build_verify_requests(items, responses_by_id(answers_path), prompt)
    write_requests(out_path, requests)
    log.info("%d of %d answers sent to the verifier", len(requests), len(items))


def validate_requests(human_path, out_path, prompt: VerifierPrompt) -> None:
    rows = load_human_scores(human_path)
    requests = [
        prompt.request(r["id"], r["example_question"], r["example_assumption"], r["answer"])
        for r in rows
    ]
    write_requests(out_path, requests)


def retry_requests(requests_path, responses_path, reminder_path, out_path) -> None:
    requests = read_requests(requests_path)
    retries = build_retry_requests(
        requests, responses_by_id(responses_path), read_template(reminder_path)
    )
    write_requests(out_path, retries)
    log.info("%d of %d verifier replies retried with a reminder", len(retries), len(requests))
