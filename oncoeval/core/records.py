"""The two record types that cross the `generate` rule: requests in, responses out.

Request sets are JSONL files, one request per line::

    {"request_id": "p01|specified|ff", "messages": [{"role": "user", "content": "..."}],
     "params": {"temperature": 0, "max_new_tokens": 256, "seed": 0}, "meta": {...}}

Responses follow the output contract of DESIGN.md; ``meta`` is copied through from the request.
A failed call's row adds ``error_kind`` (oncoeval.backends.failures.KINDS), set where it failed, and
``error_status``, the HTTP status a server failed it with; an answer's row has neither.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import asdict, dataclass, field

from .errors import InputError
from .inputs import check_length
from .io import iter_jsonl, iter_jsonl_lines, write_jsonl

ROLES = {"system", "user", "assistant"}
# Generation parameters a request may carry; anything else is a mistake worth stopping on.
KNOWN_PARAMS = {
    "temperature",
    "max_new_tokens",
    "seed",
    "top_p",
    "top_k",
    "stop",
    "response_shape",
    "text_logprobs",
}
# ``text_logprobs: true``: generate nothing; return the log-probability of each token of the
# last message's text, read as plain text (no chat template), in ``Response.token_logprobs``
# (the exposure audit's likelihood probe; backends that cannot say so in
# ``BaseBackend.text_logprobs_problem``).
# New tokens a local backend (hf, vllm) generates for a request that names no max_new_tokens
# (every study's request sets name one; an API backend leaves it to the server).
REQUEST_MAX_NEW_TOKENS_UNSET = 256
# The seed of a sampled request that names none (the local backends draw it alike). A request
# parameter, not the config's `bootstrap.seed`.
REQUEST_SEED_UNSET = 0


@dataclass(frozen=True)
class Request:
    request_id: str
    messages: list[dict]
    params: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def sampled(self) -> bool:
        return float(self.params.get("temperature", 0) or 0) > 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Response:
    request_id: str
    model: str
    text: str | None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    cached: bool = False
    error: str | None = None
    cost_usd: float | None = None
    meta: dict = field(default_factory=dict)
    # Why a shaped request was answered without its shape enforced (oncoeval.core.shapes).
    structured_fallback: str | None = None
    # The text is the model's refusal (an API's ``message.refusal``), not an answer to the task.
    refused: bool = False
    # ``cost_usd`` is the call's worst case: the server reported no usable usage (backends.api).
    cost_estimated: bool = False
    # The model the server says answered, and whether it is not the one asked for (backends.api).
    served_model: str | None = None
    other_model: bool = False
    # What failed (oncoeval.backends.failures.KINDS), set by the backend or the spend cap where it failed,
    # and the HTTP status a server failed the call with. Written only on a failed call's row.
    error_kind: str | None = None
    error_status: int | None = None
    # Per-token log-probabilities of a ``text_logprobs`` request's text (None otherwise).
    token_logprobs: list[float] | None = None

    def to_dict(self) -> dict:
        row = asdict(self)
        # an answer's row is as it was before kinds; only the requests that asked for
        # log-probabilities carry them
        for name in ("error_kind", "error_status", "token_logprobs"):
            if row[name] is None:
                del row[name]
        return row

    @classmethod
    def from_dict(cls, row: dict) -> Response:
        known = {f for f in cls.__dataclass_fields__}
        resp = cls(**{k: v for k, v in row.items() if k in known})
        if resp.error is not None and "error_kind" not in row:
            # A row written before failures had kinds: its kind read once, here, from its text.
            resp.error_kind, resp.error_status = kind_of_old_error(resp.error)
        return resp


def kind_of_old_error(error: str) -> tuple[str, int | None]:
    """(kind, HTTP status) of a failed call's ``error`` in a row written before rows carried
    ``error_kind``: the message prefixes those versions wrote (frozen, as they were written;
    the "Error code: N" of the openai client's status errors). New rows never come here."""
    status = re.search(r"\bError code: (\d{3})\b", error)
    prefixes = {
        "max_cost_usd reached": "cap",
        "AuthenticationError": "key",
        "PermissionDeniedError": "key",
        "RuntimeError: not sent: the API rejected the key": "key",
        "empty answer": "empty",
        "APITimeoutError": "timeout",
        "APIConnectionError": "connection",
        "CutBody": "cut_body",
        "BadReply": "bad_reply",
        "Redirected": "redirect",
        "replay:": "replay",
    }
    if "content filtered by the provider" in error:
        kind = "filter"
    else:
        kind = next((k for p, k in prefixes.items() if error.startswith(p)), None)
    if kind is None:
        kind = "server" if status else "other"
    return kind, int(status.group(1)) if status and kind == "server" else None


def verdict_problem(resp: Response | None) -> str | None:
    """Why a judge's reply cannot be used as a verdict (None when it can).

    A failed call is no verdict, and neither is one cut off at the token limit
    (``finish_reason`` ``length``): its conclusion may be missing or half-written.
    """
    if resp is None:
        return "no response"
    if resp.error is not None:
        return f"error: {resp.error}"
    if resp.finish_reason == "length":
        return "truncated: the reply hit the token limit (finish_reason length)"
    return None


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# Generation parameters: (test, what it must be); None is "the backend's default" for each.
PARAM_RULES = {
    "temperature": (lambda v: _number(v) and 0 <= v <= 2, "a number from 0 to 2"),
    "top_p": (lambda v: _number(v) and 0 < v <= 1, "a number above 0 and at most 1"),
    "top_k": (lambda v: _integer(v) and v >= 0, "a whole number, 0 or more"),
    "max_new_tokens": (lambda v: _integer(v) and 1 <= v <= 1_000_000, "a whole number, 1 or more"),
    "seed": (lambda v: _integer(v) and abs(v) < 2**63, "a whole number"),
    "text_logprobs": (lambda v: isinstance(v, bool), "true or false"),
    "stop": (
        lambda v: (
            isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v))
        ),
        "a string or a list of strings",
    ),
}


def param_problem(name: str, value) -> str | None:
    """Why ``value`` cannot be the generation parameter ``name`` (None when it can)."""
    if value is None or name not in PARAM_RULES:
        return None
    test, what = PARAM_RULES[name]
    return None if test(value) else f"{value!r} is not {what}"


def validate_request(obj: dict, path, lineno: int) -> Request:
    where = f"line {lineno}"
    rid = obj.get("request_id")
    if not isinstance(rid, str) or not rid:
        raise InputError(path, where, "request_id must be a non-empty string")
    where = f"line {lineno} (request_id {rid!r})"
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InputError(path, where, "messages must be a non-empty list of chat messages")
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ROLES:
            raise InputError(path, where, f"messages[{i}] needs a role in {sorted(ROLES)}")
        if not isinstance(msg.get("content"), str):
            raise InputError(path, where, f"messages[{i}].content must be a string")
        check_length(path, where, msg["content"], "document", f"messages[{i}].content")
    params = obj.get("params", {})
    if not isinstance(params, dict):
        raise InputError(path, where, "params must be an object")
    unknown = set(params) - KNOWN_PARAMS
    if unknown:
        raise InputError(
            path, where, f"unknown params {sorted(unknown)}; known: {sorted(KNOWN_PARAMS)}"
        )
    for name, value in params.items():
        problem = param_problem(name, value)
        if problem:
            raise InputError(path, where, f"params.{name}: {problem}")
    if "response_shape" in params:
        from .shapes import shape_problem

        problem = shape_problem(params["response_shape"])
        if problem:
            raise InputError(path, where, problem)
    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        raise InputError(path, where, "meta must be an object")
    return Request(rid, messages, params, meta)


def read_requests(path: str | os.PathLike) -> list[Request]:
    """Read and validate a request set; duplicate ids and malformed lines raise InputError."""
    requests: list[Request] = []
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl_lines(path):
        req = validate_request(obj, path, lineno)
        if req.request_id in seen:
            raise InputError(
                path,
                f"line {lineno}",
                f"duplicate request_id {req.request_id!r} (first on line {seen[req.request_id]})",
            )
        seen[req.request_id] = lineno
        requests.append(req)
    return requests


def write_requests(path: str | os.PathLike, requests) -> None:
    rows = [r.to_dict() if isinstance(r, Request) else r for r in requests]
    ids = [r["request_id"] for r in rows]
    if len(ids) != len(set(ids)):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate request ids while writing {path}: {dupes[:5]}")
    write_jsonl(path, rows)


def read_responses(path: str | os.PathLike) -> list[Response]:
    return [Response.from_dict(row) for row in iter_jsonl(path)]


def write_responses(path: str | os.PathLike, responses) -> None:
    write_jsonl(path, [r.to_dict() for r in responses])


def effective_params(request: Request, cfg: dict) -> dict:
    """Generation parameters as the model will see them (and as the cache key records them)."""
    params = dict(request.params)
    params.setdefault("temperature", 0.0)
    cap = cfg.get("max_new_tokens")
    if cap:
        params["max_new_tokens"] = min(int(params.get("max_new_tokens", cap)), int(cap))
    if float(params["temperature"]) == 0:
        # Greedy decoding ignores the seed and nucleus settings: keep them out of the key so
        # greedy requests that differ only there share one answer.
        for key in ("seed", "top_p", "top_k"):
            params.pop(key, None)
    for key, value in (cfg.get("generation") or {}).items():
        params.setdefault(key, value)
    return params


def spent_usd(rows) -> float:
    """USD recorded in response rows (dicts); rows without a price count as 0."""
    return float(sum(row.get("cost_usd") or 0.0 for row in rows))
