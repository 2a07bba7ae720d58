"""`openai` backend: the official ``openai`` client, for OpenAI, Azure OpenAI, or any
OpenAI-compatible server (vLLM, llama.cpp server) through ``base_url``.

- The key is read from the environment variable named by ``api_key_env`` (never from the config)
  and never written anywhere: error messages are scrubbed of it before they reach a response row.
  ``azure: {endpoint_env, api_version}`` switches to ``AzureOpenAI`` (``model`` is then the
  deployment name).
- Up to ``concurrency`` requests are in flight at once; responses are yielded as they finish.
- Retries are the client's own (``max_retries``): 408/409/429/5xx, timeouts and connection errors,
  with exponential backoff, or the wait the server asks for in ``Retry-After``/``retry-after-ms``
  (up to two minutes; the client refuses longer waits, so a longer ``Retry-After`` is waited
  for here, up to ``max_retry_after_s``, at most ``max_retries`` times). A retry that is
  sleeping does not hold a concurrency slot: the slots guard the HTTP exchange itself (see
  ``_BoundedHttpClient``), and the pool has more threads than slots, so one rate-limited
  request does not idle the others.
- Reasoning models (``reasoning: true``) get no ``temperature``/``top_p`` and
  ``max_completion_tokens`` instead of ``max_tokens``.
- A request with a ``response_shape`` is sent as structured output (oncoeval.judges.structured);
  a server that answers it with 400/422 is asked again without it, and the response records why
  in ``structured_fallback``.
- A request that fails for good becomes a Response with ``error`` ("ErrorType: message") while
  the others complete. A rejected key (401/403) fails every request still queued at once,
  without sending it; a body that is not a chat completion (an HTML page with status 200) is a
  failure. Token usage, ``cost_usd`` (from ``price``), ``finish_reason`` and ``latency_s``
  (first attempt to answer, retries included) are recorded.
- A reply with no text is a failed call (oncoeval.failures.no_text_problem): ``finish_reason``
  ``content_filter`` (with or without text) and null content without a refusal. A refusal
  (``message.refusal``) is kept as the answer's text, with ``refused`` set.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..errors import ConfigError
from ..failures import CONTENT_FILTERED, KEY_REJECTED, no_text_problem
from ..judges.structured import SHAPE_PARAM, openai_fields
from ..records import Request, Response
from .base import BaseBackend

log = logging.getLogger(__name__)

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_AZURE_ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
# Things that look like API keys (OpenAI's own error messages quote a masked key).
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_*\-]{4,}")


# The openai client retries by itself only when Retry-After is at most this long.
CLIENT_MAX_RETRY_AFTER_S = 120.0


def retry_after_s(headers) -> float | None:
    """Seconds a server asks to wait (``retry-after-ms`` or ``Retry-After``, seconds or a date)."""
    import email.utils

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


def key_env(cfg: dict) -> str:
    return cfg.get("api_key_env") or DEFAULT_KEY_ENV


def request_kwargs(request: Request, cfg: dict) -> dict:
    """Keyword arguments of ``chat.completions.create`` for one request.

    ``request.params`` are the effective parameters (see oncoeval.generate.effective_params): the
    request's own plus the model's ``generation`` block. Parameters the Chat Completions API has
    no field for (``top_k``, a server's own sampling knobs) travel in ``extra_body``, which
    OpenAI-compatible servers such as vLLM read.
    """
    params = dict(request.params)
    reasoning = bool(cfg.get("reasoning"))
    kwargs: dict = {"model": cfg["model"], "messages": request.messages}
    extra: dict = {}
    max_new = params.pop("max_new_tokens", None)
    if max_new is not None:
        kwargs["max_completion_tokens" if reasoning else "max_tokens"] = int(max_new)
    temperature = params.pop("temperature", None)
    top_p = params.pop("top_p", None)
    if not reasoning:  # reasoning models reject sampling settings
        if temperature is not None:
            kwargs["temperature"] = float(temperature)
        if top_p is not None:
            kwargs["top_p"] = float(top_p)
    for name in ("seed", "stop"):
        if name in params:
            kwargs[name] = params.pop(name)
    shape = params.pop(SHAPE_PARAM, None)
    if shape is not None:
        shaped, shaped_extra = openai_fields(shape)
        kwargs.update(shaped)
        extra.update(shaped_extra)
    extra.update(params)
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def cost_usd(price: dict | None, prompt_tokens: int | None, completion_tokens: int | None):
    """USD for one call from ``price: {prompt_per_1k, completion_per_1k}``; None when unknown."""
    if not price or prompt_tokens is None or completion_tokens is None:
        return None
    return round(
        prompt_tokens / 1000 * float(price.get("prompt_per_1k", 0))
        + completion_tokens / 1000 * float(price.get("completion_per_1k", 0)),
        8,
    )


class CutBody(RuntimeError):
    """A status-200 answer whose body ended before its JSON did, after the retries."""


def cut_in_transit(cause) -> bool:
    """Whether an HTTP error is a body that stopped before its announced length (the client's
    HTTP library raises a ``RemoteProtocolError``; matched by name, as the SDK's httpx may be a
    renamed fork)."""
    return type(cause).__name__ == "RemoteProtocolError" and "complete message body" in str(cause)


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


def _bounded_client_class():
    import openai

    class _BoundedHttpClient(openai.DefaultHttpxClient):
        """The SDK's default HTTP client with at most ``slots`` exchanges in flight.

        The slot is held for one HTTP exchange (request sent to body read), not across the
        client's retry sleeps. Waiting for a slot does not count against the request timeout.
        The SDK numbers its attempts in the ``x-stainless-retry-count`` header; retries get
        the next free slot.
        """

        def __init__(self, slots: int, **kwargs):
            super().__init__(**kwargs)
            self._slots = Slots(slots)

        def send(self, request, **kwargs):
            retry = request.headers.get("x-stainless-retry-count", "0") not in ("", "0")
            self._slots.acquire(retry)
            try:
                return super().send(request, **kwargs)
            finally:
                self._slots.release()

    return _BoundedHttpClient


CONFIG_SCHEMA = {
    "properties": {
        "model": {
            "description": (
                "Model (or Azure deployment) name sent to the API (required, no default)."
            ),
            "type": "string",
        },
        "base_url": {
            "description": (
                "API base URL; null for OpenAI itself (e.g. http://127.0.0.1:8000/v1 for vLLM)."
            ),
            "type": ["string", "null"],
            "default": None,
        },
        "api_key_env": {
            "description": ("Name of the environment variable holding the key (never the key)."),
            "type": "string",
            "default": DEFAULT_KEY_ENV,
        },
        "azure": {
            "description": "Azure OpenAI settings; null for other endpoints.",
            "type": ["object", "null"],
            "default": None,
            # Under `then`, so that the default-filling validator only fills an object (it
            # would call setdefault on the null default).
            "if": {"type": "object"},
            "then": {
                "properties": {
                    "endpoint_env": {
                        "description": "Variable holding the Azure endpoint URL.",
                        "type": "string",
                        "default": DEFAULT_AZURE_ENDPOINT_ENV,
                    },
                    "api_version": {
                        "description": "Azure API version.",
                        "type": "string",
                        "default": DEFAULT_AZURE_API_VERSION,
                    },
                }
            },
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
                "Longest Retry-After (seconds) waited for; the openai client itself gives up on "
                "waits over 120 s."
            ),
            "type": "number",
            "minimum": 0,
            "default": 900,
        },
        "reasoning": {
            "description": "Reasoning model (no temperature; max_completion_tokens).",
            "type": "boolean",
            "default": False,
        },
        "price": {
            "description": "USD per 1000 tokens, for cost accounting; null when unknown.",
            "type": ["object", "null"],
            "default": None,
            "if": {"type": "object"},  # as for azure: defaults are filled only into an object
            "then": {
                "properties": {
                    "prompt_per_1k": {
                        "description": "USD per 1000 prompt tokens.",
                        "type": "number",
                        "minimum": 0,
                        "default": 0,
                    },
                    "completion_per_1k": {
                        "description": "USD per 1000 completion tokens.",
                        "type": "number",
                        "minimum": 0,
                        "default": 0,
                    },
                }
            },
        },
        "resources": {"$ref": "#/$defs/resources"},
    },
    "required": ["model"],
}


class Backend(BaseBackend):
    name = "openai"
    libraries = ("openai",)
    CONFIG_SCHEMA = CONFIG_SCHEMA
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

    #: Pool threads per concurrency slot. Above 1, a request sleeping before a retry leaves its
    #: slot to another request (the HTTP client enforces the bound); bench_api compares with 1.
    threads_per_slot = 2

    @classmethod
    def cost_bounds(cls, cfg, prompt_tokens, max_new_tokens):
        # Unknown without a price: None, which the estimate reports as "not priced".
        price = cfg.get("price")
        return cost_usd(price, prompt_tokens, 0), cost_usd(price, prompt_tokens, max_new_tokens)

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        return {
            "chat_template_sha256": None,
            "note": "served by an API: weights and chat template are the provider's",
        }

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        # One `api_calls` slot (the profile bounds concurrent API jobs) and no GPU; a model
        # without a resources block may wait out rate limits for longer than a local job runs.
        return {
            "api_calls": 1,
            "mem_mb": 1000,
            "runtime": int((cfg.get("resources") or {}).get("runtime", 240)),
        }

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        ident = super().identity(cfg)
        if ident.get("azure"):
            # Which variable holds the endpoint is operational; the API version is not.
            ident["azure"] = {
                "api_version": ident["azure"].get("api_version", DEFAULT_AZURE_API_VERSION)
            }
        return ident

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        env = os.environ if env is None else env
        mid = cfg["id"]
        problems = []
        var = key_env(cfg)
        if not env.get(var):
            problems.append(
                f"models[{mid}].api_key_env: model {mid!r} reads its API key from the environment "
                f"variable {var}, which is not set. Export {var} before running (keys never go "
                "in the config)."
            )
        azure = cfg.get("azure")
        if azure:
            evar = azure.get("endpoint_env") or DEFAULT_AZURE_ENDPOINT_ENV
            if not env.get(evar):
                problems.append(
                    f"models[{mid}].azure.endpoint_env: model {mid!r} reads its Azure endpoint "
                    f"from the environment variable {evar}, which is not set."
                )
        return problems

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        cfg = self.filled(cfg)
        super().__init__(cfg, threads, context)
        import openai

        problems = self.config_problems(cfg)
        if problems:
            raise ConfigError(problems[0])
        self._key = os.environ[key_env(cfg)]
        self.concurrency = int(cfg["concurrency"])
        self.price = cfg.get("price")
        self.max_retries = int(cfg["max_retries"])
        self.max_retry_after_s = float(cfg["max_retry_after_s"])
        self._rejected: str | None = None  # set once the API refuses the key
        timeout = float(cfg["timeout_s"])
        # The SDK's default connection pool (1000 connections, 100 kept alive) covers any slots.
        http_client = _bounded_client_class()(slots=self.concurrency)
        common = dict(
            api_key=self._key,
            timeout=timeout,
            max_retries=self.max_retries,
            http_client=http_client,
        )
        azure = cfg.get("azure")
        if azure:
            self.client = openai.AzureOpenAI(
                azure_endpoint=os.environ[azure.get("endpoint_env") or DEFAULT_AZURE_ENDPOINT_ENV],
                api_version=azure.get("api_version") or DEFAULT_AZURE_API_VERSION,
                **common,
            )
        else:
            self.client = openai.OpenAI(base_url=cfg.get("base_url") or None, **common)
        # One INFO line per HTTP request drowns the job log; retries are still logged by openai.
        for name in ("httpx", "httpx2"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self._pool: ThreadPoolExecutor | None = None

    def _scrub(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, "***")
        return _KEYLIKE.sub("sk-***", text)

    def _create(self, request: Request):
        """One completion; a server that refuses a response shape is asked with the prompt alone.

        Returns (completion, why the shape was dropped or None).
        """
        import openai

        try:
            return self._complete(request), None
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if SHAPE_PARAM not in request.params:
                raise
            reason = self._scrub(f"server refused the response shape: {type(exc).__name__}: {exc}")
            log.warning("request %s: %s; asking without it", request.request_id, reason)
        params = {k: v for k, v in request.params.items() if k != SHAPE_PARAM}
        plain = Request(request.request_id, request.messages, params, request.meta)
        return self._complete(plain), reason

    def _complete(self, request: Request):
        """One chat completion, waiting out long ``Retry-After`` answers the client refuses."""
        import openai

        long_waits = cut_bodies = 0
        while True:
            if self._rejected is not None:
                raise RuntimeError(f"{KEY_REJECTED} ({self._rejected})")
            try:
                completion = self.client.chat.completions.create(
                    **request_kwargs(request, self.cfg)
                )
            except json.JSONDecodeError as exc:
                # Status 200 whose JSON stops early (a proxy cut the body): asked again like a
                # transient failure, then reported as a cut body.
                if cut_bodies >= self.max_retries:
                    raise CutBody(
                        f"the answer from {self.client.base_url} was cut off: its JSON ends "
                        f"early ({exc}); retried {cut_bodies} times"
                    ) from exc
                cut_bodies += 1
                log.warning("request %s: the answer was cut off; asking again", request.request_id)
                time.sleep(min(8.0, 0.5 * 2**cut_bodies))
                continue
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                self._rejected = f"{type(exc).__name__} {exc.status_code}"
                raise
            except openai.APIStatusError as exc:
                wait = retry_after_s(exc.response.headers)
                if (
                    wait is None
                    or wait <= CLIENT_MAX_RETRY_AFTER_S
                    or wait > self.max_retry_after_s
                    or long_waits >= self.max_retries
                ):
                    if wait is not None and wait > self.max_retry_after_s:
                        raise RuntimeError(
                            f"{type(exc).__name__}: the server asked to wait {wait:.0f} s "
                            f"(Retry-After), beyond max_retry_after_s={self.max_retry_after_s:g}"
                        ) from exc
                    raise
                long_waits += 1
                log.warning("request %s: waiting %.0f s (Retry-After)", request.request_id, wait)
                time.sleep(wait)
                continue
            if not isinstance(completion, openai.types.chat.ChatCompletion):
                raise ValueError(
                    f"the server at {self.client.base_url} answered with a body that is not a "
                    f"chat completion (status 200, starts {str(completion)[:80]!r}); is base_url "
                    "the OpenAI-compatible API (often ending in /v1)?"
                )
            if not completion.choices:
                raise ValueError("the server returned no choices")
            return completion

    def _describe(self, exc: Exception) -> str:
        """A failed call's ``error``: "ErrorType: message", naming what the user can check."""
        import openai

        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            if cut_in_transit(cause):
                return (
                    f"CutBody: the answer from {self.client.base_url} was cut off in transit "
                    f"({cause}); retried {self.max_retries} times"
                )
            if not isinstance(exc, openai.APITimeoutError):
                detail = f" ({type(cause).__name__}: {cause})" if cause else ""
                return f"{text} could not reach base_url {self.client.base_url}{detail}"
        if isinstance(exc, openai.BadRequestError) and getattr(exc, "code", None) in (
            "content_filter",
            "content_policy_violation",
        ):
            return f"{text} ({CONTENT_FILTERED}: the prompt was refused)"
        return text

    def _call(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            completion, fallback = self._create(request)
        except Exception as exc:  # one failed request must not stop the others
            message = self._scrub(self._describe(exc))
            if KEY_REJECTED not in message:  # one line per refused key
                log.warning("request %s failed for good: %s", request.request_id, message)
            return Response(
                request.request_id,
                self.model_id,
                None,
                latency_s=round(time.perf_counter() - started, 4),
                error=message,
            )
        choice = completion.choices[0]
        text = choice.message.content
        refusal = getattr(choice.message, "refusal", None)
        refused = text is None and bool(refusal)
        if refused:  # a refusal is the model's answer: kept, and counted as refused
            text = refusal
        # No text (filtered by the provider, or null content) is a failed call, never a score.
        problem = no_text_problem(text, choice.finish_reason)
        if problem:
            log.warning("request %s failed: %s", request.request_id, problem)
        usage = completion.usage
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        return Response(
            request.request_id,
            self.model_id,
            None if problem else text,
            finish_reason=choice.finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=round(time.perf_counter() - started, 4),
            error=problem,
            cost_usd=cost_usd(self.price, prompt_tokens, completion_tokens),
            structured_fallback=fallback,
            refused=refused,
        )

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        if not requests:
            return
        workers = min(len(requests), self.threads_per_slot * self.concurrency)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai")
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
        self.client.close()
