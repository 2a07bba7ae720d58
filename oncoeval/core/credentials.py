"""API keys and URL credentials: read strictly, and never written anywhere.

A key is read from the environment variable a model entry names (``api_key_env``), stripped of
surrounding whitespace (a CRLF ``.env`` leaves a ``\\r``) and refused when it still holds a
control character, naming the variable and never the value. Once read it is registered here,
and :func:`scrub` removes it, in every form a message may quote it (as read, stripped, as
``repr`` or JSON escapes it), from any text: error rows, log lines, a job's stderr, answers
before they are cached. :func:`scrub` also masks URL credentials (``user:pass@`` userinfo and
credential query parameters such as ``?api_key=``) and anything shaped like an OpenAI key
(``sk-...``). :func:`redact_url` is the form of a ``base_url`` that identity, provenance and
exports hold: without credentials, and unchanged for a URL that has none (so the cache identity
of existing configs stays the same).
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
# Things that look like OpenAI keys (the API's own error messages quote a masked key).
KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_*\-]{4,}")
# A variable name as POSIX shells accept it.
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Query parameters that carry a credential (compared in lower case, with `-` read as `_`).
CREDENTIAL_PARAMS = frozenset(
    {"api_key", "apikey", "key", "token", "access_token", "auth", "password", "secret",
     "sig", "signature", "code", "client_secret", "x_api_key", "subscription_key"}
)  # fmt: skip
# A URL with a scheme inside running text (up to whitespace, a quote or a bracket).
URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]{}`]+")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_lock = threading.Lock()
_forms: list[str] = []  # every registered key's forms, longest first


def key_forms(key: str) -> set[str]:
    """The ways a message may quote ``key``: as read, stripped, and as repr/JSON escape it."""
    forms = set()
    for k in {key, key.strip()}:
        forms |= {k, repr(k)[1:-1], json.dumps(k)[1:-1]}
    return {f for f in forms if len(f) >= 4}  # a one-letter "key" would mask every text


def register(key: str) -> None:
    """Scrub ``key`` (all its forms) from every text :func:`scrub` sees in this process."""
    global _forms
    with _lock:
        _forms = sorted(set(_forms) | key_forms(key), key=len, reverse=True)


def forget_all() -> None:
    """Forget every registered key (tests)."""
    global _forms
    with _lock:
        _forms = []


def _credential_param(name: str) -> bool:
    return name.lower().replace("-", "_") in CREDENTIAL_PARAMS


def redact_url(url: str | None) -> str | None:
    """``url`` without credentials: userinfo and credential query values become ``***``.

    A URL without credentials comes back unchanged, character for character."""
    if not url or not isinstance(url, str):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return URL_IN_TEXT.sub(MASK, url)
    netloc, query = parts.netloc, parts.query
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    if query and any(_credential_param(k) for k, _ in parse_qsl(query, keep_blank_values=True)):
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _credential_param(k) else v) for k, v in pairs], safe="*")
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_has_credentials(url: str | None) -> bool:
    return bool(url) and redact_url(url) != url


def scrub(text, keys=()):
    """``text`` with every registered key (and ``keys``) in any form, URL credentials and
    key-shaped strings masked. Anything but a string comes back as it is."""
    if not isinstance(text, str) or not text:
        return text
    forms = _forms
    if keys:
        extra = set().union(*(key_forms(k) for k in keys if k))
        forms = sorted(set(forms) | extra, key=len, reverse=True)
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
    text = KEYLIKE.sub("sk-" + MASK, text)
    if "://" in text:
        text = URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    return text


def scrub_answer(text):
    """A model's answer with the registered keys masked (a server that echoes the request's
    ``Authorization`` header must not get the key into the cache); nothing else is changed."""
    if not isinstance(text, str) or not _forms:
        return text
    for form in _forms:
        if form in text:
            text = text.replace(form, MASK)
    return text


def scrub_response(response):
    """A Response (oncoeval.core.records) with its answer and error scrubbed, in place; returned."""
    response.text = scrub_answer(response.text)
    response.error = scrub(response.error)
    return response


# -- reading keys -----------------------------------------------------------------------------


def looks_like_key(name: str) -> bool:
    """Whether a value given where a variable's *name* belongs is rather a key itself."""
    if KEYLIKE.search(name) or not VARIABLE_NAME.fullmatch(name):
        return True
    # Variable names are words joined by `_`; a long run of mixed letters and digits is a token.
    run = max((len(part) for part in name.split("_")), default=0)
    mixed = any(c.islower() for c in name) and any(c.isdigit() for c in name)
    return run >= 24 or (mixed and run >= 16)


def name_problem(key: str, value) -> str | None:
    """The problem of a config value that must name an environment variable (never quoted)."""
    if not isinstance(value, str) or not looks_like_key(value):
        return None
    return (
        f"{key}: the value is not an environment variable name (it looks like a key or "
        "another secret, so it is not shown here); put the secret in an environment variable "
        "and write that variable's name here, e.g. OPENAI_API_KEY"
    )


def key_problem(where: str, var: str, env) -> str | None:
    """Why the variable ``var`` cannot be used as a key (unset, empty, control characters),
    naming the variable and never its value; None when it can."""
    raw = env.get(var)
    if raw is None or not raw.strip():
        return None  # unset or empty: the caller says so with its own cure
    if CONTROL.search(raw.strip()):
        return (
            f"{where}: the environment variable {var} holds a control character inside its "
            "value (a line break or tab, e.g. two lines pasted); set it to the key alone"
        )
    return None


def read_key(var: str, env) -> str:
    """The key in ``var``, stripped of surrounding whitespace, and registered for scrubbing.
    Call :func:`key_problem` first."""
    raw = env[var]
    register(raw)
    key = raw.strip()
    register(key)
    return key


# -- logs and stderr ----------------------------------------------------------------------------


class ScrubFilter(logging.Filter):
    """Log records with their message scrubbed (formatted once, arguments dropped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = scrub(text), None
        return True


class ScrubbingStream(io.TextIOBase):
    """A text stream that scrubs what is written to it before passing it on (a job's stderr:
    tracebacks, warnings and prints of libraries)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self):
        return getattr(self._stream, "encoding", "utf-8")

    def close(self) -> None:
        # The job's log stream lives as long as the job; collecting this wrapper (io's __del__
        # calls close) must not close it.
        self._stream.flush()

    def __getattr__(self, name):  # anything else (``buffer``, ``mode``...) is the stream's
        return getattr(self._stream, name)
