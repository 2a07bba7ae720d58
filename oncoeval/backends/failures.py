"""What a failed model call is, and what cures it.

A failed call's row (oncoeval.core.records.Response) carries ``error``, a sentence for people, and
``error_kind``, one of :data:`KINDS`, set where the call failed: by the backend that made it
(its transport knows a rejected key from a timeout; oncoeval.backends.api), or by the spend
cap that refused it (oncoeval.workflow.generate). Nothing here reads an error's text.

Every kind names its cure (:func:`cures`): the end-of-run report and a job that stops on failed
calls say what to do for the failure at hand, since a plain rerun cures only some. A server that
failed every call of a job is named as failing (:func:`server_failing_cure`), not called
transient.
"""

from __future__ import annotations

from ..core.credentials import redact_url

# The kinds of failed calls (``Response.error_kind``).
CAP = "cap"  # the spend cap (max_cost_usd) refused the call: nothing was sent
KEY = "key"  # the API rejected the key (401/403), or the call was not sent after it did
FILTER = "filter"  # the provider's content filter withheld the answer or refused the prompt
EMPTY = "empty"  # a reply with no text (content null, no refusal)
TIMEOUT = "timeout"  # no answer within timeout_s
CONNECTION = "connection"  # the server could not be reached
CUT_BODY = "cut_body"  # the answer was cut off in transit
BAD_REPLY = "bad_reply"  # a reply no answer can be taken from (not text, too long, too large)
REDIRECT = "redirect"  # the server redirected the POST (never followed)
REPLAY = "replay"  # a replayed model has no stored answer for the request
SERVER = "server"  # the server answered with an error (HTTP 5xx, 429...) after the retries
OTHER = "other"  # anything else: a local model's exception, a backend that skipped a request
KINDS = (
    CAP,
    KEY,
    FILTER,
    EMPTY,
    TIMEOUT,
    CONNECTION,
    CUT_BODY,
    BAD_REPLY,
    REDIRECT,
    REPLAY,
    SERVER,
    OTHER,
)


def filtered(response) -> bool:
    """Whether a call failed because the provider's content filter withheld the answer."""
    return response.error is not None and response.error_kind == FILTER


def _backend(model_cfg: dict):
    from . import get_backend

    return get_backend(model_cfg["backend"])


def _url(model_cfg: dict) -> tuple[str, str | None]:
    """(the key of the model entry that holds its server's URL, that URL), as its backend
    names them (``url_key``)."""
    key = _backend(model_cfg).url_key
    return (key, model_cfg.get(key)) if key else ("url", None)


def cure(kind: str, model_cfg: dict) -> str:
    """What to do about failed calls of one kind, as a sentence naming the setting to change."""
    mid = model_cfg.get("id", "?")
    if kind == CAP:
        return (
            f"the spend cap stopped the calls: raise models[{mid}].max_cost_usd and rerun (the "
            "answers already paid for stay in the cache and are not asked again; a rerun with "
            "the same cap sends nothing)"
        )
    if kind == KEY:
        # The backend knows where its key lives (its schema default, e.g. OPENAI_API_KEY).
        backend = _backend(model_cfg)
        var = backend.key_env(model_cfg) if hasattr(backend, "key_env") else "its key variable"
        return (
            f"the API refused the key: put a valid key in the environment variable {var} "
            f"(models[{mid}].api_key_env) and rerun; no call was scored"
        )
    if kind == FILTER:
        return (
            "the provider's content filter withheld the answers: a plain rerun asks them again, "
            "but a filtered prompt is usually filtered again; have the filter relaxed for this "
            "deployment, or accept them as unscored with max_failed_share"
        )
    if kind == EMPTY:
        return "the server sent replies without text: a plain rerun asks only them again"
    if kind == CONNECTION:
        key, url = _url(model_cfg)
        url = redact_url(url) or "the provider's default URL"
        return (
            f"the server could not be reached: check models[{mid}].{key} ({url}) and that "
            "the server is up, then rerun (only the failed requests are asked)"
        )
    if kind == TIMEOUT:
        return (
            "the server did not answer in time: a plain rerun asks only the failed ones (raise "
            f"models[{mid}].timeout_s if it keeps happening)"
        )
    if kind == CUT_BODY:
        return "the server's answers were cut off in transit: a plain rerun asks only them again"
    if kind == BAD_REPLY:
        key, _ = _url(model_cfg)
        return (
            "the server's replies could not be taken as answers (not text, longer than "
            "max_new_tokens allows, or a body over the size limit; docs/reliability.md): check "
            f"that models[{mid}].{key} is an OpenAI-compatible server that keeps to the "
            "token cap; a plain rerun asks only the failed ones"
        )
    if kind == REDIRECT:
        key, _ = _url(model_cfg)
        return (
            "the server redirected the requests elsewhere (the error names where), and a "
            f"redirect is never followed: if you trust that address, set models[{mid}].{key} "
            "to it and rerun"
        )
    if kind == REPLAY:
        return f"add the missing answers to models[{mid}].path (a replay makes no call)"
    if kind == SERVER:
        return "a transient failure: a plain rerun asks only the failed ones"
    return "the calls failed (the job's log names why): a plain rerun asks only the failed ones"


def server_failing_cure(statuses, model_cfg: dict) -> str:
    """The cure when every call failed with a server error: the server, not luck.
    ``statuses`` are the HTTP statuses the failed calls got (None where none)."""
    mid = model_cfg.get("id", "?")
    _, url = _url(model_cfg)
    url = url or "the provider's API"
    statuses = sorted({s for s in statuses if s is not None})
    how = f" with {'/'.join(map(str, statuses))}" if statuses else ""
    return (
        f"every call to {url} failed{how}: check the server (its log, and that it serves "
        f"models[{mid}].model), then rerun; a rerun alone sends the same calls to the same server"
    )


def cures(failed, model_cfg: dict, calls: int | None = None) -> list[str]:
    """One cure per kind of failure among the ``failed`` responses, in the order the kinds
    first appear.

    ``calls`` is how many calls the job made: when every one failed, all of them with a server
    error (5xx, 429, a server's own error), the server is named as failing rather than the
    failures called transient.
    """
    failed = [r for r in failed if r.error is not None]
    kinds = list(dict.fromkeys(r.error_kind or OTHER for r in failed))
    if calls and len(failed) >= calls and kinds == [SERVER]:
        return [server_failing_cure([r.error_status for r in failed], model_cfg)]
    return [cure(kind, model_cfg) for kind in kinds]
