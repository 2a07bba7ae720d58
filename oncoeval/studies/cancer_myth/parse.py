"""Parse: model output read into values. Verifier scores (and each answer's final reading from
its verifier replies, first and retry), classifier categories, generated questions.

Each parser returns a value or a reason it failed; the reason is recorded per item and counted,
never guessed around. JSON is read from code fences or from prose around it; a score is only
taken from an explicit key (``Sharpness`` or ``score``) and must be -1, 0 or 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ...core.io import write_jsonl
from ...core.parsing import json_spans, too_long
from ...core.records import Response, read_responses, verdict_problem
from ...judges.jury import combine as combine_votes
from .data import normalize_category, read_items

SCORE_KEYS = ("sharpness", "score")
VALID_SCORES = (-1, 0, 1)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
# A score key with a literal number after it, for JSON broken elsewhere (an unescaped quote in the
# reason): the key must be quoted, so prose such as "Score (in JSON): 1" never counts.
_KEYED_NUMBER = re.compile(
    r"""["'](sharpness|score)["']\s*:\s*["']?([+-]?\d+(?:\.\d+)?)["']?""", re.IGNORECASE
)


@dataclass(frozen=True)
class VerifierResult:
    score: int | None
    reason: str
    error: str  # empty when a score was read

    @property
    def ok(self) -> bool:
        return self.score is not None


def json_values(text: str) -> list:
    """JSON values found in ``text``: fenced blocks first, then objects/arrays in the prose."""
    found = []
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        # nesting past Python's stack, an integer past its 4,300 digits (ValueError): not read
        except (ValueError, RecursionError):
            pass
    if found:
        return found
    return [value for _, value in json_spans(text)]


def _lower_keys(obj: dict) -> dict:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _score_objects(value) -> list[dict]:
    """Objects holding a score key, searched through lists and nested objects."""
    out = []
    if isinstance(value, list):
        for v in value:
            out.extend(_score_objects(v))
    elif isinstance(value, dict):
        low = _lower_keys(value)
        if any(k in low and not isinstance(low[k], dict) for k in SCORE_KEYS):
            out.append(low)
        for v in value.values():
            if isinstance(v, dict | list):
                out.extend(_score_objects(v))
    return out


def _as_score(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    # At most 20 digits: a verdict is -1, 0 or 1, and a longer run of digits overflows a float.
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,20}(\.0+)?\s*", value):
        return int(float(value))
    return None


def parse_verifier(text: str | None) -> VerifierResult:
    """Read the verifier's JSON score (-1, 0 or 1) and reason from its raw reply."""
    if text is None or not text.strip():
        return VerifierResult(None, "", "empty verifier output")
    if too_long(text):
        return VerifierResult(None, "", too_long(text))
    candidates = []
    for value in json_values(text):
        for obj in _score_objects(value):
            key = next(k for k in SCORE_KEYS if k in obj)
            candidates.append((obj[key], str(obj.get("reason", "") or "")))
    if not candidates:
        keyed = _KEYED_NUMBER.findall(text)
        if not keyed:
            return VerifierResult(None, "", "no score in verifier output")
        candidates = [(num, "") for _, num in keyed]
    scores = []
    for raw, _ in candidates:
        score = _as_score(raw)
        if score is None or score not in VALID_SCORES:
            return VerifierResult(None, "", f"score {raw!r} is not -1, 0 or 1")
        scores.append(score)
    if len(set(scores)) > 1:
        return VerifierResult(None, "", f"conflicting scores {sorted(set(scores))}")
    reason = next((r for _, r in candidates if r), "")
    return VerifierResult(scores[0], reason, "")


def parse_category(text: str | None) -> tuple[str | None, str]:
    """(category, error) from the classifier's JSON reply."""
    if text is None or not text.strip():
        return None, "empty classifier output"
    if too_long(text):
        return None, too_long(text)
    labels = []
    for value in json_values(text):
        items = value if isinstance(value, list) else [value]
        for obj in items:
            if isinstance(obj, dict):
                low = _lower_keys(obj)
                if "category" in low:
                    labels.append(low["category"])
    if not labels:
        return None, "no category in classifier output"
    cats = {normalize_category(label) for label in labels}
    if None in cats:
        bad = next(label for label in labels if normalize_category(label) is None)
        return None, f"unknown category {bad!r}"
    if len(cats) > 1:
        return None, f"conflicting categories {sorted(cats)}"
    return cats.pop(), ""


def parse_generated(text: str | None, limit: int) -> tuple[list[dict], str]:
    """Questions with corrections from the generator's reply: (records, error).

    Records need ``example_question`` and ``example_assumption`` (non-empty strings); at most
    ``limit`` are kept. The error is empty when at least one record was read, and names what went
    wrong otherwise (or when some records were unusable).
    """
    if text is None or not text.strip():
        return [], "empty generator output"
    if too_long(text):
        return [], too_long(text)
    records, skipped = [], 0
    for value in json_values(text):
        for obj in value if isinstance(value, list) else [value]:
            if not isinstance(obj, dict):
                continue
            low = _lower_keys(obj)
            q, a = low.get("example_question"), low.get("example_assumption")
            if isinstance(q, str) and q.strip() and isinstance(a, str) and a.strip():
                records.append({"example_question": q.strip(), "example_assumption": a.strip()})
            else:
                skipped += 1
    if not records:
        return [], "no question with example_question and example_assumption in generator output"
    note = f"{skipped} record(s) without question or assumption skipped" if skipped else ""
    if len(records) > limit:
        note = "; ".join(filter(None, [note, f"{len(records) - limit} extra question(s) dropped"]))
    return records[:limit], note


# --- verdicts: each answer's final reading ---------------------------------------------------


def responses_by_id(path) -> dict[str, Response]:
    return {r.request_id: r for r in read_responses(path)}


def answer_problem(resp: Response | None) -> str:
    """Why an answer cannot be verified ('' when it can)."""
    if resp is None:
        return "no response"
    if resp.error:
        return f"responder error: {resp.error}"
    if not (resp.text or "").strip():
        return "empty answer"
    return ""


def _reading(resp: Response | None):
    problem = verdict_problem(resp)
    if problem is not None:
        return None, "", f"verifier {problem}"
    result = parse_verifier(resp.text)
    return result.score, result.reason, result.error


def judge(rid: str, answer: Response | None, first: Response | None, retry: Response | None):
    """The final reading of one item: score or parse_error, with the raw verifier texts."""
    problem = answer_problem(answer)
    record = {
        "answer": None if answer is None else answer.text,
        "verifier_text": None if first is None else first.text,
        "verifier_retry_text": None if retry is None else retry.text,
        "retried": retry is not None,
        "score": None,
        "reason": "",
        "parse_error": "",
    }
    if problem:
        record["parse_error"] = problem
        return record
    score, reason, error = _reading(first)
    if score is None and retry is not None:
        score, reason, error2 = _reading(retry)
        error = f"{error}; after retry: {error2}" if score is None else ""
    record.update(score=score, reason=reason, parse_error=error if score is None else "")
    return record


def jury_reading(rid, answer, firsts: list[dict], retries: list[dict], how: str) -> dict:
    """One item's combined record from every juror's first and retry replies: each read exactly
    as a single verifier's (``judge``), the readable scores combined by ``how``
    (oncoeval.judges.jury); ``votes`` keeps every juror's score."""
    readings = [
        judge(rid, answer, f.get(rid), r.get(rid)) for f, r in zip(firsts, retries, strict=True)
    ]
    verdict = combine_votes(
        [x["score"] for x in readings], how, problems=[x["parse_error"] for x in readings]
    )
    return {
        "score": verdict.value,
        "parse_error": verdict.reason,
        "votes": list(verdict.votes),
        "retried": any(x["retried"] for x in readings),
        "jurors": readings,
    }


def cluster_of(item: dict) -> str:
    """The resampling cluster of a question: the source record it was written from
    (``source_type:source_row``), or the question itself when it has none (``source_row`` -1 or
    missing: a hand-written question is its own cluster, never one shared cluster)."""
    row = item.get("source_row")
    try:
        known = row is not None and int(row) >= 0
    except (TypeError, ValueError):
        known = bool(str(row).strip())
    if known:
        return f"{item.get('source_type') or 'source'}:{row}"
    return f"question:{item['question_id']}"


def judged_records(items, answers, firsts, retries, jury: list[str], combine: str) -> list[dict]:
    """Per item: the question, the answer and its verdict (everything needed to audit).

    ``firsts``/``retries``: each juror's replies by request id; one juror is a single verifier,
    several a jury whose readable scores combine by ``combine`` (oncoeval.judges.jury).
    """
    judged = []
    for it in items:
        qid = it["question_id"]
        if len(jury) == 1:
            rec = judge(qid, answers.get(qid), firsts[0].get(qid), retries[0].get(qid))
        else:
            rec = jury_reading(qid, answers.get(qid), firsts, retries, combine)
        judged.append(
            {
                "question_id": qid,
                "cluster": cluster_of(it),
                "category": it["category"],
                "from_model": it["from_model"],
                "question": it["question"],
                "correction": it["correction"],
                "verifier": "+".join(jury),
                **rec,
            }
        )
    return judged


def parse(items_path, answers_path, first_paths, retry_paths, jury, combine, judged_path):
    """One model's answers and the verifier's (or each juror's) replies -> judged records."""
    judged = judged_records(
        read_items(items_path),
        responses_by_id(answers_path),
        [responses_by_id(p) for p in first_paths],
        [responses_by_id(p) for p in retry_paths],
        list(jury),
        combine,
    )
    write_jsonl(judged_path, judged)
