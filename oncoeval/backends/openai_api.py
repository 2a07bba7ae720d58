"""`openai` backend: the official ``openai`` client, for OpenAI, Azure OpenAI, or any
OpenAI-compatible server (vLLM, llama.cpp server) through ``base_url``.

The transport of an API backend (oncoeval.backends.api holds the key handling, concurrency,
Retry-After waits, rejected keys, price and spend cap, PHI default and resources):

- ``azure: {endpoint_env, api_version}`` switches to ``AzureOpenAI`` (``model`` is then the
  deployment name).
- Retries are the client's own (``max_retries``): 408/409/429/5xx, timeouts and connection errors,
  with exponential backoff, or the wait the server asks for in ``Retry-After``/``retry-after-ms``
  (up to two minutes; the client refuses longer waits, which the base waits for, up to
  ``max_retry_after_s``). The concurrency slots guard the HTTP exchange itself (see
  ``_BoundedHttpClient``), so a retry that is sleeping does not hold one.
- Reasoning models (``reasoning: true``) get no ``temperature``/``top_p`` and
  ``max_completion_tokens`` instead of ``max_tokens``.
- A request with a ``response_shape`` is sent as structured output (:func:`shape_fields`); a server
  that answers it with 400/422 is asked again without it, and the response records why in
  ``structured_fallback``.
- A body that is not a chat completion (an HTML page with status 200) is a failure; a body cut
  off in transit is named as such (``CutBody``), and an unreachable ``base_url`` is named.
- A refusal (``message.refusal``) is kept as the answer's text, with ``refused`` set; null
  content without one is a failed call (the base, oncoeval.backends.failures). Content given as a list
  of text parts is joined; content of any other type is a failed call (``BadReply``).
- A POST is never redirected (a 302 would turn it into a GET, a 307 send the prompt elsewhere):
  a redirect is a failed call naming its target (``Redirected``). A POST's answer is read with
  a bound on its decoded size (``MAX_BODY_BYTES``; only gzip and deflate are accepted, inflated
  a piece at a time) and a deadline: ``timeout_s`` is the whole exchange, from sending the
  request to the body's last byte, so a server that trickles its body is cut there (and asked
  again like any timeout).
- The endpoint is the model's identity: ``base_url``, else ``OPENAI_BASE_URL``, normalised
  (:func:`endpoint_identity`), enters the cache key, so two servers never share answers.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import urllib.parse
import zlib

from ..core import credentials
from ..core.io import encodable_messages
from ..core.records import Request
from ..core.shapes import SHAPE_PARAM
from . import batch, failures
from .api import (
    Answer,
    ApiBackend,
    BadReply,
    CallFailed,
    Failure,
    Slots,
    api_schema,
    cost_usd,
    message_text,
    retry_after_s,
)
from .base import CONTENT_FILTERED

log = logging.getLogger(__name__)

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_AZURE_ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
# The openai client retries by itself only when Retry-After is at most this long.
CLIENT_MAX_RETRY_AFTER_S = 120.0
# The largest answer body read (decoded): far above any chat completion of one choice, far
# below what would strain a job's memory.
MAX_BODY_BYTES = 8 * 1024 * 1024
# Where the openai client sends requests without base_url or OPENAI_BASE_URL.
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
# Compressions whose output is inflated here a piece at a time (zlib wbits; 47: gzip or zlib).
_INFLATE = {"gzip": 47, "x-gzip": 47, "deflate": 47}


class Redirected(CallFailed):
    """The server answered a POST with a redirect, which is not followed."""

    kind = failures.REDIRECT


def configured_base_url(cfg: dict, env=None) -> str:
    """Where the model's requests go as the client is given it: ``base_url``, else the
    ``OPENAI_BASE_URL`` the openai client falls back on, else OpenAI's own API."""
    env = os.environ if env is None else env
    return cfg.get("base_url") or env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL


def normal_url(url: str) -> str:
    """``url`` without userinfo, fragment or trailing slashes, credential query values masked,
    its scheme and host in lower case: ``http://u:p@Host:8000/v1/`` and ``http://host:8000/v1``
    are one endpoint."""
    parts = urllib.parse.urlsplit(url.strip())
    host = parts.netloc.rpartition("@")[2].lower()
    normal = urllib.parse.urlunsplit(
        (parts.scheme.lower(), host, parts.path.rstrip("/"), parts.query, "")
    )
    return credentials.redact_url(normal)  # a ?api_key= value never enters a key or a record


def endpoint_identity(cfg: dict, env=None) -> str | None:
    """The endpoint as the cache key holds it: the normalised ``base_url`` or
    ``OPENAI_BASE_URL``; None for OpenAI's own API reached without either (as before either
    was read, so those answers keep their keys)."""
    env = os.environ if env is None else env
    if not (cfg.get("base_url") or env.get("OPENAI_BASE_URL")):
        return None
    return normal_url(configured_base_url(cfg, env))


def read_bounded(response, deadline: float, limit: int = MAX_BODY_BYTES) -> bytes:
    """The decoded body of a streamed ``response``, read until ``deadline`` (``time.monotonic``)
    and at most ``limit`` bytes; ``BadReply`` past the limit or for an encoding other than gzip
    or deflate, the HTTP library's ``ReadTimeout`` past the deadline (retried as a timeout)."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity", *_INFLATE):
        raise BadReply(f"the body is encoded as {encoding!r}; only gzip and deflate are read")
    inflate = zlib.decompressobj(_INFLATE[encoding]) if encoding in _INFLATE else None
    body = bytearray()
    for raw in response.iter_raw():  # each piece as it arrives
        if time.monotonic() > deadline:
            httpx = sys.modules[type(response).__module__.split(".")[0]]
            raise httpx.ReadTimeout(
                "its body was still arriving at the deadline",
                request=response.request,
            )
        data = raw
        while data:
            if inflate is None:
                body += data
                data = b""
            else:  # at most what the limit leaves, so a small bomb never inflates whole
                try:
                    body += inflate.decompress(data, limit + 1 - len(body))
                except zlib.error as exc:
                    raise BadReply(f"the {encoding} body cannot be inflated ({exc})") from exc
                data = inflate.unconsumed_tail
            if len(body) > limit:
                raise BadReply(
                    f"the body is larger than {limit:,} bytes (MAX_BODY_BYTES) once decoded"
                )
    return bytes(body)


def shape_fields(shape: dict) -> tuple[dict, dict]:
    """(keyword arguments, extra body fields) of ``chat.completions.create`` for a response
    shape (oncoeval.core.shapes): a JSON schema as ``response_format`` ``{"type": "json_schema",
    ...}`` (Structured Outputs); a choice as ``structured_outputs: {"choice": [...]}`` in the
    body, which vLLM's OpenAI-compatible server reads (OpenAI itself has no choice form and
    refuses it)."""
    if "choice" in shape:
        return {}, {"structured_outputs": {"choice": list(shape["choice"])}}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": shape.get("name", "verdict"),
                "schema": shape["json_schema"],
                "strict": True,
            },
        }
    }, {}


def request_kwargs(request: Request, cfg: dict) -> dict:
    """Keyword arguments of ``chat.completions.create`` for one request.

    ``request.params`` are the effective parameters (see oncoeval.core.records.effective_params): the
    request's own plus the model's ``generation`` block. Parameters the Chat Completions API has
    no field for (``top_k``, a server's own sampling knobs) travel in ``extra_body``, which
    OpenAI-compatible servers such as vLLM read.
    """
    params = dict(request.params)
    reasoning = bool(cfg.get("reasoning"))
    # A lone surrogate (quoted from a model's answer) has no UTF-8 form: sent as U+FFFD.
    kwargs: dict = {"model": cfg["model"], "messages": encodable_messages(request.messages)}
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
        shaped, shaped_extra = shape_fields(shape)
        kwargs.update(shaped)
        extra.update(shaped_extra)
    extra.update(params)
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def cut_in_transit(cause) -> bool:
    """Whether an HTTP error is a body that stopped before its announced length (the client's
    HTTP library raises a ``RemoteProtocolError``; matched by name, as the SDK's httpx may be a
    renamed fork)."""
    return type(cause).__name__ == "RemoteProtocolError" and "complete message body" in str(cause)


def content_filtered(exc) -> bool:
    """Whether a 400 is the provider's content filter refusing the prompt."""
    return getattr(exc, "code", None) in ("content_filter", "content_policy_violation")


def _bounded_client_class():
    import openai

    class _BoundedHttpClient(openai.DefaultHttpxClient):
        """The SDK's default HTTP client with at most ``slots`` exchanges in flight, and each
        POST bounded: never redirected, its body read within ``deadline_s`` and
        ``MAX_BODY_BYTES`` (:func:`read_bounded`).

        The slot is held for one HTTP exchange (request sent to body read), not across the
        client's retry sleeps. Waiting for a slot does not count against the request timeout.
        The SDK numbers its attempts in the ``x-stainless-retry-count`` header; retries get
        the next free slot.
        """

        def __init__(self, slots: Slots, deadline_s: float, **kwargs):
            # Only gzip and deflate: brotli and zstd cannot be inflated a piece at a time here.
            kwargs.setdefault("headers", {"Accept-Encoding": "gzip, deflate"})
            super().__init__(follow_redirects=False, **kwargs)
            self._slots = slots
            self._deadline_s = deadline_s

        def send(self, request, *, stream: bool = False, **kwargs):
            retry = request.headers.get("x-stainless-retry-count", "0") not in ("", "0")
            self._slots.acquire(retry)
            try:
                if request.method != "POST":  # batch status, file contents: as the SDK does
                    kwargs.setdefault("follow_redirects", True)
                    return super().send(request, stream=stream, **kwargs)
                return self._post(request, stream, kwargs)
            finally:
                self._slots.release()

        def _post(self, request, stream: bool, kwargs: dict):
            deadline = time.monotonic() + self._deadline_s
            kwargs["follow_redirects"] = False
            response = super().send(request, stream=True, **kwargs)
            try:
                if response.has_redirect_location:
                    # Named without credentials or query (either may carry a secret).
                    here = normal_url(str(request.url.copy_with(query=None)))
                    there = normal_url(response.headers["location"].partition("?")[0])
                    raise Redirected(
                        f"the server at {here} answered {response.status_code} "
                        f"{response.reason_phrase}, to {there}; a redirected POST is not "
                        "followed (it would become a GET or send the prompt elsewhere)"
                    )
                if not stream:
                    # Read here, bounded; the SDK then finds the body read (httpx keeps a read
                    # body in ``_content``, which ``read()`` returns).
                    response._content = read_bounded(response, deadline)
            except BaseException:
                response.close()
                raise
            if not stream:
                response.close()
            return response

    return _BoundedHttpClient


CONFIG_SCHEMA = api_schema(
    {
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
        "reasoning": {
            "description": "Reasoning model (no temperature; max_completion_tokens).",
            "type": "boolean",
            "default": False,
        },
        **batch.SCHEMA,
    },
    key_env=DEFAULT_KEY_ENV,
    required=["model"],
)


class Backend(ApiBackend):
    name = "openai"
    libraries = ("openai",)
    CONFIG_SCHEMA = CONFIG_SCHEMA
    decoding_keys = (*ApiBackend.decoding_keys, "reasoning")
    # Batch mode changes the route and the price, never an answer (oncoeval.backends.batch).
    operational_keys = ApiBackend.operational_keys | set(batch.SCHEMA)

    @classmethod
    def batch_mode(cls, cfg: dict) -> bool:
        return bool(cls.filled(cfg)["batch"])

    @classmethod
    def batch_cost_bounds(cls, cfg, prompt_tokens, max_new_tokens):
        price = batch.batch_price(cfg.get("price"))
        return cost_usd(price, prompt_tokens, 0), cost_usd(price, prompt_tokens, max_new_tokens)

    def batch_body(self, request: Request) -> dict:
        """The body of one batch line: the synchronous call's arguments, with the fields the
        SDK would send in ``extra_body`` at the top level, where a batch line carries them."""
        body = request_kwargs(request, self.cfg)
        body.update(body.pop("extra_body", {}))
        return body

    # The client retries by itself, and its HTTP client takes a slot per exchange.
    transport_retries = True
    client_max_retry_after_s = CLIENT_MAX_RETRY_AFTER_S

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        ident = super().identity(cfg)
        if ident.get("azure"):
            # Which variable holds the endpoint is operational; the API version is not.
            ident["azure"] = {
                "api_version": ident["azure"].get("api_version", DEFAULT_AZURE_API_VERSION)
            }
        else:
            # The endpoint answered: base_url or OPENAI_BASE_URL, normalised (".../v1/" is
            # ".../v1"); OpenAI's own API without either keeps the key it always had.
            url = endpoint_identity(cfg)
            if url is not None:
                ident["base_url"] = url
        return ident

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        azure = cfg.get("azure")
        if azure:
            where = os.environ.get(azure.get("endpoint_env") or DEFAULT_AZURE_ENDPOINT_ENV)
        else:
            where = configured_base_url(cfg)
        return {**super().provenance(cfg, root), "endpoint": normal_url(where) if where else None}

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        env = os.environ if env is None else env
        mid = cfg["id"]
        problems = super().config_problems(cfg, env)
        azure = cfg.get("azure")
        if azure:
            evar = azure.get("endpoint_env") or DEFAULT_AZURE_ENDPOINT_ENV
            named = credentials.name_problem(f"models[{mid}].azure.endpoint_env", evar)
            if named:
                problems.append(named)
            elif not env.get(evar):
                problems.append(
                    f"models[{mid}].azure.endpoint_env: model {mid!r} reads its Azure endpoint "
                    f"from the environment variable {evar}, which is not set."
                )
        return problems

    def connect(self) -> None:
        import openai

        # The SDK's default connection pool (1000 connections, 100 kept alive) covers any slots.
        common = dict(
            api_key=self.key,
            timeout=self.timeout_s,
            max_retries=self.max_retries,
            http_client=_bounded_client_class()(slots=self.slots, deadline_s=self.timeout_s),
        )
        azure = self.cfg.get("azure")
        if azure:
            self.client = openai.AzureOpenAI(
                azure_endpoint=os.environ[azure.get("endpoint_env") or DEFAULT_AZURE_ENDPOINT_ENV],
                api_version=azure.get("api_version") or DEFAULT_AZURE_API_VERSION,
                **common,
            )
        else:
            self.client = openai.OpenAI(base_url=configured_base_url(self.cfg), **common)
        # One INFO line per HTTP request drowns the job log; retries are still logged by openai.
        for name in ("httpx", "httpx2"):
            logging.getLogger(name).setLevel(logging.WARNING)

    def disconnect(self) -> None:
        self.client.close()

    def endpoint(self) -> str:
        return str(self.client.base_url)

    def describe(self, exc: Exception) -> str:
        import openai

        text = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            if cut_in_transit(cause):
                return (
                    f"CutBody: the answer from {self.client.base_url} was cut off in transit "
                    f"({cause}); retried {self.max_retries} times"
                )
            if isinstance(exc, openai.APITimeoutError):
                # Whose deadline it was: a read that waited too long, or the whole answer.
                detail = f" ({cause})" if cause and str(cause) else ""
                return f"{text}{detail} after timeout_s={self.timeout_s:g}"
            detail = f" ({type(cause).__name__}: {cause})" if cause else ""
            return f"{text} could not reach base_url {self.client.base_url}{detail}"
        if isinstance(exc, openai.BadRequestError) and content_filtered(exc):
            return f"{text} ({CONTENT_FILTERED}: the prompt was refused)"
        return text

    def failure(self, exc: Exception) -> Failure | None:
        import openai

        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return Failure(exc.status_code, rejected_key=True)
        if isinstance(exc, openai.BadRequestError) and content_filtered(exc):
            return Failure(exc.status_code, kind=failures.FILTER)
        if isinstance(exc, openai.APIStatusError):
            return Failure(exc.status_code, retry_after_s(exc.response.headers))
        if isinstance(exc, openai.APIConnectionError):  # the client retried it already
            if cut_in_transit(exc.__cause__):
                return Failure(kind=failures.CUT_BODY)
            if isinstance(exc, openai.APITimeoutError):
                return Failure(kind=failures.TIMEOUT)
            return Failure(kind=failures.CONNECTION)
        return None

    def answer(self, request: Request) -> Answer:
        """One completion; a server that refuses a response shape is asked with the prompt alone."""
        import openai

        try:
            return self.complete(request)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if SHAPE_PARAM not in request.params:
                raise
            reason = self.scrub(f"server refused the response shape: {type(exc).__name__}: {exc}")
            log.warning("request %s: %s; asking without it", request.request_id, reason)
        params = {k: v for k, v in request.params.items() if k != SHAPE_PARAM}
        plain = Request(request.request_id, request.messages, params, request.meta)
        answer = self.complete(plain)
        answer.structured_fallback = reason
        return answer

    def send(self, request: Request) -> Answer:
        import openai

        completion = self.client.chat.completions.create(**request_kwargs(request, self.cfg))
        if not isinstance(completion, openai.types.chat.ChatCompletion):
            raise BadReply(
                f"the server at {self.client.base_url} answered with a body that is not a "
                f"chat completion (status 200, starts {str(completion)[:80]!r}); is base_url "
                "the OpenAI-compatible API (often ending in /v1)?"
            )
        if not completion.choices:
            raise BadReply("the server returned no choices")
        choice = completion.choices[0]
        text = message_text(choice.message.content)
        refusal = getattr(choice.message, "refusal", None)
        refused = text is None and isinstance(refusal, str) and bool(refusal)
        if refused:  # a refusal is the model's answer: kept, and counted as refused
            text = refusal
        usage = completion.usage
        served = getattr(completion, "model", None)
        return Answer(
            text,
            finish_reason=choice.finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            refused=refused,
            served_model=served if isinstance(served, str) else None,
        )

    def asked_model(self) -> str | None:
        # An Azure deployment's name is the user's own, not the model's: nothing to compare.
        return None if self.cfg.get("azure") else self.cfg["model"]
