"""The shared base of backends that call a model over an HTTP API (``openai``; any further one).

An API backend is its transport only. Its module gives the keys of its own (``api_schema``
adds the shared ones), and its ``Backend`` class implements:

- ``connect()``: build the client, once per job (``self.key`` holds the API key);
- ``send(request) -> Answer``: one exchange with the server;
- ``failure(exc) -> Failure | None``: what an exception of its client means (an HTTP status,
  the server's ``Retry-After``, a rejected key), None for anything else (a failed request).

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
  content) is a failed call, a refusal an answer with ``refused`` set (oncoeval.failures);
- ``price`` -> ``cost_usd`` of each call, the estimate's cost bounds, and the spend cap's round
  (``concurrency`` calls between two checks);
- ``phi_safe`` false by default (requests leave the machine), and the job's resources: one
  ``api_calls`` slot, no GPU, and a ``runtime`` long enough to wait out rate limits.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from .. import credentials
from ..errors import ConfigError
from ..failures import KEY_REJECTED, no_text_problem
from ..records import Request, Response
from .base import BaseBackend

log = logging.getLogger(__name__)

# HTTP statuses worth asking again (besides timeouts and lost connections).
RETRYABLE = frozenset({408, 409, 429})


@dataclass
class Answer:
    """What one exchange returned."""

    text: str | None  # None: the reply had no content
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    structured_fallback: str | None = None
    refused: bool = False  # the text is the model's refusal, not an answer to the task


class CutBody(RuntimeError):
    """A status-200 answer whose body ended before its JSON did, after the retries."""


@dataclass
class Failure:
    """What a transport's exception means: ``status`` None for a timeout or lost connection."""

    status: int | None = None
    retry_after: float | None = None
    rejected_key: bool = False


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
            "description": "Per-request timeout in seconds.",
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
        "price": {
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
        },
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
        # exports (oncoeval.credentials); a URL without them is kept as written.
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
            raise RuntimeError(f"{KEY_REJECTED} ({self._rejected})")

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
            raise RuntimeError(
                f"{type(exc).__name__}: the server asked to wait {wait:.0f} s (Retry-After), "
                f"beyond max_retry_after_s={self.max_retry_after_s:g}"
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

    def _call(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            answer = self.answer(request)
        except Exception as exc:  # one failed request must not stop the others
            message = self.scrub(self.describe(exc))
            if KEY_REJECTED not in message:  # one line per refused key
                log.warning("request %s failed for good: %s", request.request_id, message)
            return Response(
                request.request_id,
                self.model_id,
                None,
                latency_s=round(time.perf_counter() - started, 4),
                error=message,
            )
        # No text (filtered by the provider, or null content) is a failed call, never a score.
        problem = no_text_problem(answer.text, answer.finish_reason)
        if problem:
            log.warning("request %s failed: %s", request.request_id, problem)
        return Response(
            request.request_id,
            self.model_id,
            None if problem else answer.text,
            finish_reason=answer.finish_reason,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            latency_s=round(time.perf_counter() - started, 4),
            error=problem,
            cost_usd=cost_usd(self.price, answer.prompt_tokens, answer.completion_tokens),
            structured_fallback=answer.structured_fallback,
            refused=answer.refused,
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
