"""The shared base of backends that call a model over an HTTP API (``openai``; any further one).

An API backend is its transport only. Its module gives the keys of its own (``api_schema``
adds the shared ones), and its ``Backend`` class implements:

- ``connect()``: build the client, once per job (``self.key`` holds the API key);
- ``send(request) -> Answer``: one exchange with the server;
- ``failure(exc) -> Failure | None``: what an exception of its client means (an HTTP status,
  the server's ``Retry-After``, a timeout or a lost connection), None for anything else.

A failed call's row gets its kind here, where it failed (``Response.error_kind``;
oncoeval.backends.failures): from the ``Failure`` the transport names (401/403: ``key``, another status:
``server``, else the transport's ``timeout``/``connection``/...), or from the ``CallFailed``
raised (``BadReply``, ``CutBody``, a key already rejected, a wait too long); anything else is
``other``.

``ApiBackend`` owns the rest, the same for every API:

- the key, read from the variable named by ``api_key_env`` (never from the config), checked
  before any job starts, and scrubbed from every error message;
- at most ``concurrency`` exchanges in flight (``Slots``; a retry goes before first attempts),
  from a pool with more threads than slots, so a request sleeping before a retry holds none;
- retries of 408/409/429/5xx, timeouts and lost connections, up to ``max_retries``, waiting
  what the server asks in ``Retry-After``/``retry-after-ms`` (a wait beyond
  ``max_retry_after_s`` fails the request), else an exponential backoff; a transport whose
  client retries by itself (``transport_retries``) is only helped with the long waits its
  client refuses;
- a rejected key (401/403) fails every request still queued at once, without sending it;
- a status-200 body whose JSON ends early (a proxy cut it) is asked again like a transient
  failure, then fails as ``CutBody``; a reply with no text (the provider's content filter, null
  content) is a failed call, a refusal an answer with ``refused`` set (oncoeval.backends.failures);
- ``price`` -> ``cost_usd`` of each call, the estimate's cost bounds, and the spend cap's round
  (``concurrency`` calls between two checks); a priced call whose reply carries no usable usage
  (missing, negative, non-finite, beyond ``MAX_REPORTED_TOKENS``, or zero for a non-empty prompt or
  answer) is counted at its worst case (:func:`worst_case_tokens`), with ``cost_estimated`` set,
  so a server that reports no usage cannot spend past ``max_cost_usd``;
- a reply is checked before it is cached (:func:`answer_problem`): an answer longer than its
  ``max_new_tokens`` allows (``MAX_CHARS_PER_TOKEN`` characters a token, plus
  ``ANSWER_SLACK_CHARS``) is a failed call; the model the server says it used is recorded
  (``served_model``), and ``other_model`` is set when it is not the one asked for;
- ``phi_safe`` false by default (requests leave the machine), and the job's resources: one
  ``api_calls`` slot, no GPU, and a ``runtime`` long enough to wait out rate limits.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from ..core import credentials
from ..core.errors import ConfigError
from ..core.records import Request, Response
from . import failures
from .base import BaseBackend, no_text_failure

log = logging.getLogger(__name__)

# HTTP statuses worth asking again (besides timeouts and lost connections).
RETRYABLE = frozenset({408, 409, 429})
# Usage counts above this are not believed (no model reads or writes ten million tokens a call).
MAX_REPORTED_TOKENS = 10_000_000
# The longest answer a request may get: max_new_tokens times this many characters, plus the
# slack. Tokens of common tokenizers average about 4 characters; the longest (runs of spaces or
# of one symbol) reach a few dozen, so 32 leaves room for any real answer at its cap.
MAX_CHARS_PER_TOKEN = 32
ANSWER_SLACK_CHARS = 1024
# The worst case of a prompt without usage: one token per UTF-8 byte (a byte-level tokenizer
# never makes more) plus this many per message for the chat template's own tokens.
TEMPLATE_TOKENS_PER_MESSAGE = 8


@dataclass
class Answer:
    """What one exchange returned."""

    text: str | None  # None: the reply had no content
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    structured_fallback: str | None = None
    refused: bool = False  # the text is the model's refusal, not an answer to the task
    served_model: str | None = None  # the model the server says answered (None: not said)


class CallFailed(RuntimeError):
    """A call that failed in a way the backend names: ``kind`` (oncoeval.backends.failures.KINDS) and
    the HTTP ``status`` the server gave, if any, go into the failed call's row."""

    kind = failures.OTHER

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class BadReply(CallFailed):
    """A reply no answer can be taken from (its body too large, its content not text); its
    name starts the failed call's error."""

    kind = failures.BAD_REPLY


class KeyRejected(CallFailed):
    """A request not sent because the API already rejected the key."""

    kind = failures.KEY


class WaitTooLong(CallFailed):
    """The server asked to wait (Retry-After) longer than ``max_retry_after_s``."""

    kind = failures.SERVER


def message_text(content) -> str | None:
    """A reply's ``content`` as text: a string, or a list of text parts joined; None for null.
    Any other content (a number, an image part) is no answer: ``BadReply``."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
                continue
            kind = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            if kind != "text" or not isinstance(text, str):
                raise BadReply(f"the reply's content has a part that is not text: {part!r:.80}")
            texts.append(text)
        return "".join(texts)
    raise BadReply(f"the reply's content is a {type(content).__name__}, not text: {content!r:.80}")


class CutBody(CallFailed):
    """A status-200 answer whose body ended before its JSON did, after the retries."""

    kind = failures.CUT_BODY


@dataclass
class Failure:
    """What a transport's exception means: ``status`` None for a timeout or lost connection.

    ``kind`` (oncoeval.backends.failures.KINDS) is the transport's to name where the status does not
    say it (``timeout``, ``cut_body``, ``filter``...); left None, it follows from the status:
    401/403 (or ``rejected_key``) is ``key``, any other status ``server``, none ``connection``.
    """

    status: int | None = None
    retry_after: float | None = None
    rejected_key: bool = False
    kind: str | None = None

    def __post_init__(self):
        if self.status in (401, 403):
            self.rejected_key = True
        if self.kind is None:
            if self.rejected_key:
                self.kind = failures.KEY
            elif self.status is not None:
                self.kind = failures.SERVER
            else:
                self.kind = failures.CONNECTION


def retry_after_s(headers) -> float | None:
    """Seconds a server asks to wait (``retry-after-ms`` or ``Retry-After``, seconds or a date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def usable_tokens(value) -> int | None:
    """A reported token count as a whole number, or None when it cannot be believed (missing,
    not a number, fractional, negative, non-finite, above ``MAX_REPORTED_TOKENS``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_REPORTED_TOKENS else None


def usable_cost(value) -> float | None:
    """A recorded ``cost_usd`` that can be added up (finite, not negative), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def worst_case_tokens(request: Request, text: str | None) -> tuple[int, int]:
    """(prompt, completion) tokens a call cannot have exceeded: one token per UTF-8 byte of the
    messages plus the template's per message, and ``max_new_tokens`` (without one, a token per
    byte of the answer)."""
    prompt = sum(
        len(str(m.get("content") or "").encode("utf-8", "surrogatepass"))
        + TEMPLATE_TOKENS_PER_MESSAGE
        for m in request.messages
    )
    cap = request.params.get("max_new_tokens")
    completion = int(cap) if cap is not None else len((text or "").encode("utf-8", "replace"))
    return prompt, completion


def reported_usage(answer: Answer, request: Request) -> tuple[int | None, int | None, str | None]:
    """The answer's (prompt, completion) tokens as believed, and why they are not (or None)."""
    prompt = usable_tokens(answer.prompt_tokens)
    completion = usable_tokens(answer.completion_tokens)
    if answer.prompt_tokens is None and answer.completion_tokens is None:
        return None, None, "the server reports no usage"
    if prompt is None or completion is None:
        return (
            prompt,
            completion,
            f"the server reports unusable usage (prompt_tokens {answer.prompt_tokens!r}, "
            f"completion_tokens {answer.completion_tokens!r})",
        )
    asked = any(str(m.get("content") or "") for m in request.messages)
    if (asked and prompt == 0) or (answer.text and completion == 0):
        return prompt, completion, "the server reports zero tokens for a non-empty prompt or answer"
    return prompt, completion, None


def answer_problem(text: str | None, request: Request) -> str | None:
    """Why an answer cannot be kept (a failed call's error), or None: longer than its
    ``max_new_tokens`` can produce (the server ignored the cap, or sent something else)."""
    cap = request.params.get("max_new_tokens")
    if text is None or cap is None:
        return None
    allowed = int(cap) * MAX_CHARS_PER_TOKEN + ANSWER_SLACK_CHARS
    if len(text) <= allowed:
        return None
    return (
        f"{BadReply.__name__}: the answer has {len(text):,} characters, more than max_new_tokens={cap} "
        f"allows (at most {allowed:,}: {MAX_CHARS_PER_TOKEN} a token plus "
        f"{ANSWER_SLACK_CHARS:,}); the server did not keep to the token cap"
    )


def same_model(asked: str | None, served: str | None) -> bool:
    """Whether the server answered with the model asked for: the same name, or a dated
    snapshot of it (OpenAI answers "gpt-4o" with "gpt-4o-2024-08-06"); unknown counts as same."""
    if not asked or not served:
        return True
    return served == asked or served.startswith(asked + "-") or asked.startswith(served + "-")


def cost_usd(price: dict | None, prompt_tokens: int | None, completion_tokens: int | None):
    """USD for one call from ``price: {prompt_per_1k, completion_per_1k}``; None when unknown."""
    if not price or prompt_tokens is None or completion_tokens is None:
        return None
    return round(
        prompt_tokens / 1000 * float(price.get("prompt_per_1k", 0))
        + completion_tokens / 1000 * float(price.get("completion_per_1k", 0)),
        8,
    )


def _price_per_1k(what: str) -> dict:
    return {
        "description": f"USD per 1000 {what} tokens.",
        "type": "number",
        "minimum": 0,
        "default": 0,
    }


def _price_schema() -> dict:
    """The ``price`` setting: USD per 1000 tokens, synchronous and batch."""
    return {
        "description": "USD per 1000 tokens, for cost accounting; null when unknown.",
        "type": ["object", "null"],
        "default": None,
        # Under `then`, so that the default-filling validator only fills an object (it
        # would call setdefault on the null default).
        "if": {"type": "object"},
        "then": {
            "properties": {
                "prompt_per_1k": _price_per_1k("prompt"),
                "completion_per_1k": _price_per_1k("completion"),
                "batch": {
                    "description": (
                        "USD per 1000 tokens of batch calls (batch: true); a rate left "
                        "unset is half the synchronous one."
                    ),
                    "type": ["object", "null"],
                    "default": None,
                    "if": {"type": "object"},
                    "then": {
                        "properties": {
                            "prompt_per_1k": {
                                "description": "USD per 1000 prompt tokens in a batch.",
                                "type": "number",
                                "minimum": 0,
                            },
                            "completion_per_1k": {
                                "description": "USD per 1000 completion tokens in a batch.",
                                "type": "number",
                                "minimum": 0,
                            },
                        }
                    },
                },
            }
        },
    }


def api_schema(own: dict, key_env: str, required: list[str]) -> dict:
    """The ``CONFIG_SCHEMA`` of an API backend: its ``own`` keys, then the shared ones;
    ``key_env`` is the default variable holding its key."""
    shared = {
        "api_key_env": {
            "description": "Name of the environment variable holding the key (never the key).",
            "type": "string",
            "default": key_env,
        },
        "concurrency": {
            "description": "Requests in flight at once.",
            "type": "integer",
            "minimum": 1,
            "default": 8,
        },
        "timeout_s": {
            "description": (
                "Seconds each attempt of a request may take in all, from sending it to the "
                "last byte of its answer (a server that trickles its answer is cut there)."
            ),
            "type": "number",
            "exclusiveMinimum": 0,
            "default": 120,
        },
        "max_retries": {
            "description": (
                "Retries on 429, 5xx and timeouts (with backoff, honouring Retry-After)."
            ),
            "type": "integer",
            "minimum": 0,
            "default": 6,
        },
        "max_retry_after_s": {
            "description": (
                "Longest Retry-After (seconds) waited for; a request asked to wait longer fails."
            ),
            "type": "number",
            "minimum": 0,
            "default": 900,
        },
        "price": _price_schema(),
        "resources": {
            "$ref": "#/$defs/resources",
            # Without a resources block, an API job may wait out rate limits for longer than a
            # local job runs.
            "default": {"runtime": 240},
        },
    }
    return {"properties": {**own, **shared}, "required": required}


class Slots:
    """At most ``n`` holders at once; a waiting retry goes before waiting first attempts.

    A retry has already waited (its backoff or Retry-After); letting it queue behind fresh
    requests again would stretch the end of a run by a whole round of calls. Each release wakes
    one waiter (not all: with dozens of threads waiting, waking every one per release costs more
    CPU than the calls themselves); whoever takes a slot passes the wake-up on while slots remain.
    """

    def __init__(self, n: int):
        self._free = n
        self._retries_waiting = 0
        lock = threading.Lock()
        self._lock = lock
        self._retry = threading.Condition(lock)
        self._fresh = threading.Condition(lock)

    def _wake_one(self) -> None:
        if self._free > 0:
            (self._retry if self._retries_waiting else self._fresh).notify()

    def acquire(self, retry: bool = False) -> None:
        with self._lock:
            if retry:
                self._retries_waiting += 1
                try:
                    while self._free == 0:
                        self._retry.wait()
                finally:
                    self._retries_waiting -= 1
            else:
                while self._free == 0 or self._retries_waiting:
                    self._fresh.wait()
            self._free -= 1
            self._wake_one()

    def release(self) -> None:
        with self._lock:
            self._free += 1
            self._wake_one()


class ApiBackend(BaseBackend):
    """Base class of the API backends (see the module docstring)."""

    phi_safe_default = False  # requests leave the machine for the API's servers
    deployment = "externally_managed"
    operational_keys = BaseBackend.operational_keys | {
        "concurrency",
        "timeout_s",
        "max_retries",
        "max_retry_after_s",
        "price",
        "api_key_env",
        "resources",
    }

    #: True when the transport's client retries by itself and takes a slot per HTTP exchange
    #: (``self.slots``): the base then only waits out the ``Retry-After`` answers longer than
    #: ``client_max_retry_after_s``, which such a client gives up on.
    transport_retries = False
    client_max_retry_after_s = 0.0

    url_key = "base_url"

    #: Pool threads per concurrency slot. Above 1, a request sleeping before a retry leaves its
    #: slot to another request (the slots bound the exchanges); bench_api compares with 1.
    threads_per_slot = 2

    @classmethod
    def key_env(cls, cfg: dict) -> str:
        return cls.filled(cfg)["api_key_env"]

    @classmethod
    def spend_round(cls, cfg: dict) -> int | None:
        # A round of `concurrency` calls is in flight at once; each round's cost is paid.
        return int(cls.filled(cfg)["concurrency"])

    @classmethod
    def cost_bounds(cls, cfg, prompt_tokens, max_new_tokens):
        # Unknown without a price: None, which the estimate reports as "not priced".
        price = cfg.get("price")
        return cost_usd(price, prompt_tokens, 0), cost_usd(price, prompt_tokens, max_new_tokens)

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        return {
            **super().provenance(cfg, root),
            "chat_template_sha256": None,
            "note": "served by an API: weights and chat template are the provider's",
        }

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        # One `api_calls` slot (the profile bounds concurrent API jobs) and no GPU.
        return {"api_calls": 1, "mem_mb": 1000, "runtime": int(machine["runtime"])}

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        # A URL's credentials (userinfo, ?api_key=) never enter the identity, provenance or
        # exports (oncoeval.core.credentials); a URL without them is kept as written.
        return {
            k: credentials.redact_url(v) if isinstance(v, str) else v
            for k, v in super().identity(cfg).items()
        }

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        env = os.environ if env is None else env
        mid, var = cfg["id"], cls.key_env(cfg)
        where = f"models[{mid}].api_key_env"
        problem = credentials.name_problem(where, var) or credentials.key_problem(where, var, env)
        if problem:
            return [problem]
        if (env.get(var) or "").strip():
            return []
        return [
            f"models[{mid}].api_key_env: model {mid!r} reads its API key from the environment "
            f"variable {var}, which is not set. Export {var} before running (keys never go "
            "in the config)."
        ]

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        cfg = self.filled(cfg)
        super().__init__(cfg, threads, context)
        problems = self.config_problems(cfg)
        if problems:
            raise ConfigError(problems[0])
        self.key = credentials.read_key(self.key_env(cfg), os.environ)
        self.concurrency = int(cfg["concurrency"])
        self.price = cfg.get("price")
        self.timeout_s = float(cfg["timeout_s"])
        self.max_retries = int(cfg["max_retries"])
        self.max_retry_after_s = float(cfg["max_retry_after_s"])
        self.slots = Slots(self.concurrency)
        self._rejected: str | None = None  # set once the API refuses the key
        self._pool: ThreadPoolExecutor | None = None
        self.connect()

    # -- the transport ----------------------------------------------------------------------

    def connect(self) -> None:
        raise NotImplementedError

    def send(self, request: Request) -> Answer:
        raise NotImplementedError

    def failure(self, exc: Exception) -> Failure | None:
        return None

    def disconnect(self) -> None:
        """Close the client (called once, at the end of the job)."""

    def endpoint(self) -> str:
        """Where the requests go, for messages."""
        return f"the {self.name} API"

    def asked_model(self) -> str | None:
        """The model name sent to the server (None: none to compare the served one with)."""
        return self.cfg.get("model")

    def describe(self, exc: Exception) -> str:
        """A failed call's ``error``: "ErrorType: message", naming what the user can check."""
        return f"{type(exc).__name__}: {exc}"

    def answer(self, request: Request) -> Answer:
        """One request's answer, retried as the base allows (a transport may wrap it)."""
        return self.complete(request)

    # -- shared ------------------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        return credentials.scrub(text, keys=[self.key])

    def _check_key(self) -> None:
        if self._rejected is not None:
            raise KeyRejected(f"not sent: the API rejected the key ({self._rejected})")

    def _attempt(self, request: Request, retry: bool) -> Answer:
        if self.transport_retries:  # its client takes the slots, exchange by exchange
            return self.send(request)
        self.slots.acquire(retry)
        try:
            self._check_key()  # refused while this request waited for its slot
            return self.send(request)
        finally:
            self.slots.release()

    def complete(self, request: Request) -> Answer:
        """One request's answer, with the retries and waits described in the module docstring."""
        retries = cut_bodies = 0
        while True:
            self._check_key()
            try:
                return self._attempt(request, retry=retries > 0)
            except json.JSONDecodeError as exc:
                # Status 200 whose JSON stops early (a proxy cut the body): asked again like a
                # transient failure, then reported as a cut body.
                if cut_bodies >= self.max_retries:
                    raise CutBody(
                        f"the answer from {self.endpoint()} was cut off: its JSON ends early "
                        f"({exc}); retried {cut_bodies} times"
                    ) from exc
                cut_bodies += 1
                log.warning("request %s: the answer was cut off; asking again", request.request_id)
                time.sleep(min(8.0, 0.5 * 2**cut_bodies))
                continue
            except Exception as exc:
                failure = self.failure(exc)
                if failure is None:
                    raise
                if failure.rejected_key:
                    self._rejected = f"{type(exc).__name__} {failure.status}"
                    raise
                wait = self._retry_wait(failure, exc, retries)
                if wait is None:
                    raise
            retries += 1
            log.warning("request %s: retry %d in %.1f s", request.request_id, retries, wait)
            time.sleep(wait)

    def _retry_wait(self, failure: Failure, exc: Exception, retries: int) -> float | None:
        """Seconds to wait before asking again, None to give up."""
        wait = failure.retry_after
        if wait is not None and wait > self.max_retry_after_s:
            raise WaitTooLong(
                f"{type(exc).__name__}: the server asked to wait {wait:.0f} s (Retry-After), "
                f"beyond max_retry_after_s={self.max_retry_after_s:g}",
                failure.status,
            ) from exc
        if retries >= self.max_retries:
            return None
        if self.transport_retries:  # its client waited already, unless the wait was too long
            return wait if wait is not None and wait > self.client_max_retry_after_s else None
        if failure.status is not None and failure.status not in RETRYABLE and failure.status < 500:
            return None
        if wait is not None:
            return wait
        return min(8.0, 0.5 * 2**retries) * random.uniform(0.75, 1.0)  # noqa: S311 (jitter)

    def failure_kind(self, exc: Exception) -> tuple[str, int | None]:
        """(kind, HTTP status) of the exception a call failed with (oncoeval.backends.failures)."""
        if isinstance(exc, CallFailed):
            return exc.kind, exc.status
        failure = self.failure(exc)
        if failure is not None:
            return failure.kind, failure.status
        return failures.OTHER, None

    def _call(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            answer = self.answer(request)
        except Exception as exc:  # one failed request must not stop the others
            message = self.scrub(self.describe(exc))
            if not isinstance(exc, KeyRejected):  # one line per refused key
                log.warning("request %s failed for good: %s", request.request_id, message)
            kind, status = self.failure_kind(exc)
            return Response(
                request.request_id,
                self.model_id,
                None,
                latency_s=round(time.perf_counter() - started, 4),
                error=message,
                error_kind=kind,
                error_status=status,
            )
        return self.response_of(
            request, answer, self.price, round(time.perf_counter() - started, 4)
        )

    def response_of(
        self, request: Request, answer: Answer, price: dict | None, latency_s: float | None
    ) -> Response:
        """The response row of one answered call, checked before it can be cached (synchronous
        calls and batch lines alike; ``price`` is the rate the call was paid at)."""
        # No text (filtered by the provider, or null content) is a failed call, never a score;
        # nor is an answer longer than the request allows.
        kind, problem = no_text_failure(answer.text, answer.finish_reason) or (None, None)
        if problem is None:
            problem = answer_problem(answer.text, request)
            kind = failures.BAD_REPLY if problem else None
        if problem:
            log.warning("request %s failed: %s", request.request_id, problem)
        prompt, completion, usage_problem = reported_usage(answer, request)
        cost = cost_usd(price, prompt, completion)
        if price and usage_problem:
            # Paid for, at a price nobody reported: counted at the most it can have cost.
            cost = cost_usd(price, *worst_case_tokens(request, answer.text))
            log.warning(
                "request %s: %s; its cost is counted at its worst case, $%.4f",
                request.request_id,
                usage_problem,
                cost,
            )
        other = not same_model(self.asked_model(), answer.served_model)
        if other:
            log.warning(
                "request %s: asked for model %r, the server says %r answered",
                request.request_id,
                self.asked_model(),
                answer.served_model,
            )
        return Response(
            request.request_id,
            self.model_id,
            None if problem else answer.text,
            finish_reason=answer.finish_reason,
            prompt_tokens=prompt,
            completion_tokens=completion,
            latency_s=latency_s,
            error=problem,
            error_kind=kind,
            cost_usd=cost,
            structured_fallback=answer.structured_fallback,
            refused=answer.refused,
            cost_estimated=bool(price and usage_problem),
            served_model=answer.served_model,
            other_model=other,
        )

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        if not requests:
            return
        workers = min(len(requests), self.threads_per_slot * self.concurrency)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=self.name)
        try:
            futures = [self._pool.submit(self._call, r) for r in requests]
            for future in as_completed(futures):
                yield future.result()
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self.disconnect()
