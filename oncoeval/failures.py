"""What a failed model call is, and what cures it.

Two rules, shared by every backend:

- An answer that carries no text is a failed call, never a score: the provider's content filter
  (``finish_reason`` ``content_filter``, with or without text) and a reply whose content is null
  with no refusal (:func:`no_text_problem`). A refusal is an answer: its text is kept (the
  backend sets ``Response.refused``).
- Every failure names its cure (:func:`cures`): the end-of-run report and a job that stops on
  failed calls say what to do for the failure at hand, since a plain rerun cures only some.
"""

from __future__ import annotations

import re

from .credentials import redact_url

CONTENT_FILTERED = "content filtered by the provider"
EMPTY_ANSWER = "empty answer"
CUT_BODY = "cut body"
CAP_REACHED = "max_cost_usd reached"
KEY_REJECTED = "not sent: the API rejected the key"
# A reply no answer can be taken from: content of another type than text, an answer longer than
# the request allows, a body over the size limit (oncoeval.backends.api, openai_api).
BAD_REPLY = "BadReply"
# The server answered a request with a redirect, which is never followed for a POST.
REDIRECTED = "Redirected"


def no_text_problem(text: str | None, finish_reason: str | None) -> str | None:
    """Why a reply is no answer (an error row's text), or None when it is one.

    ``text`` is the reply's content (a refusal's text counts as content). An empty string with
    another ``finish_reason`` is the model's own answer (it stopped at once; asked again it would
    stop again) and stays an answer.
    """
    if finish_reason == "content_filter":
        return (
            f"{CONTENT_FILTERED} (finish_reason content_filter): the provider withheld or cut "
            "the answer"
        )
    if text is None:
        return f"{EMPTY_ANSWER}: the reply had no text (content null, no refusal)"
    return None


def filtered(error: str | None) -> bool:
    """Whether a call failed because the provider's content filter withheld the answer."""
    return error is not None and failure_kind(error) == "filter"


def failure_kind(error: str) -> str:
    """The kind of a failed call's ``error``: cap, key, filter, connection, timeout, cut_body,
    bad_reply, redirect, replay or transient (anything else: 429, 5xx, a server's own error)."""
    if error.startswith(CAP_REACHED):
        return "cap"
    if error.startswith(
        ("AuthenticationError", "PermissionDeniedError", f"RuntimeError: {KEY_REJECTED}")
    ):
        return "key"
    if CONTENT_FILTERED in error:
        return "filter"
    if error.startswith(EMPTY_ANSWER):
        return "empty"
    if error.startswith("APITimeoutError"):
        return "timeout"
    if error.startswith("APIConnectionError"):
        return "connection"
    if error.startswith("CutBody"):
        return "cut_body"
    if error.startswith(BAD_REPLY):
        return "bad_reply"
    if error.startswith(REDIRECTED):
        return "redirect"
    if error.startswith("replay:"):
        return "replay"
    return "transient"


def cure(kind: str, model_cfg: dict) -> str:
    """What to do about failed calls of one kind, as a sentence naming the setting to change."""
    mid = model_cfg.get("id", "?")
    if kind == "cap":
        return (
            f"the spend cap stopped the calls: raise models[{mid}].max_cost_usd and rerun (the "
            "answers already paid for stay in the cache and are not asked again; a rerun with "
            "the same cap sends nothing)"
        )
    if kind == "key":
        # The backend knows where its key lives (its schema default, e.g. OPENAI_API_KEY).
        from .backends import get_backend

        backend = get_backend(model_cfg["backend"])
        var = backend.key_env(model_cfg) if hasattr(backend, "key_env") else "its key variable"
        return (
            f"the API refused the key: put a valid key in the environment variable {var} "
            f"(models[{mid}].api_key_env) and rerun; no call was scored"
        )
    if kind == "filter":
        return (
            "the provider's content filter withheld the answers: a plain rerun asks them again, "
            "but a filtered prompt is usually filtered again; have the filter relaxed for this "
            "deployment, or accept them as unscored with max_failed_share"
        )
    if kind == "empty":
        return "the server sent replies without text: a plain rerun asks only them again"
    if kind == "connection":
        url = redact_url(model_cfg.get("base_url")) or "the provider's default URL"
        return (
            f"the server could not be reached: check models[{mid}].base_url ({url}) and that "
            "the server is up, then rerun (only the failed requests are asked)"
        )
    if kind == "timeout":
        return (
            "the server did not answer in time: a plain rerun asks only the failed ones (raise "
            f"models[{mid}].timeout_s if it keeps happening)"
        )
    if kind == "cut_body":
        return "the server's answers were cut off in transit: a plain rerun asks only them again"
    if kind == "bad_reply":
        return (
            "the server's replies could not be taken as answers (not text, longer than "
            "max_new_tokens allows, or a body over the size limit; docs/reliability.md): check "
            f"that models[{mid}].base_url is an OpenAI-compatible server that keeps to the "
            "token cap; a plain rerun asks only the failed ones"
        )
    if kind == "redirect":
        return (
            "the server redirected the requests elsewhere (the error names where), and a "
            f"redirect is never followed: if you trust that address, set models[{mid}].base_url "
            "to it and rerun"
        )
    if kind == "replay":
        return f"add the missing answers to models[{mid}].path (a replay makes no call)"
    return "a transient failure: a plain rerun asks only the failed ones"


def http_statuses(errors) -> list[int]:
    """The HTTP statuses that failed calls' errors name (the OpenAI client's "Error code: N")."""
    found = (re.search(r"\bError code: (\d{3})\b", e or "") for e in errors)
    return sorted({int(m.group(1)) for m in found if m})


def server_failing_cure(errors, model_cfg: dict) -> str:
    """The cure when every call failed the same transient way: the server, not luck."""
    mid = model_cfg.get("id", "?")
    url = model_cfg.get("base_url") or "the provider's API"
    statuses = http_statuses(errors)
    how = f" with {'/'.join(map(str, statuses))}" if statuses else ""
    return (
        f"every call to {url} failed{how}: check the server (its log, and that it serves "
        f"models[{mid}].model), then rerun; a rerun alone sends the same calls to the same server"
    )


def cures(errors, model_cfg: dict, calls: int | None = None) -> list[str]:
    """One cure per kind of failure among ``errors``, in the order the kinds first appear.

    ``calls`` is how many calls the job made: when every one failed and all of them with
    transient errors (5xx, 429, a server's own error), the server is named as failing rather
    than the failures called transient.
    """
    errors = [e for e in errors if e]
    kinds = list(dict.fromkeys(failure_kind(e) for e in errors))
    if calls and len(errors) >= calls and kinds == ["transient"]:
        return [server_failing_cure(errors, model_cfg)]
    return [cure(kind, model_cfg) for kind in kinds]
