"""`tiny_api`: a test-only API backend, written as a second API backend is: its transport only.

It posts each request as a plain JSON chat completion with the standard library's urllib (no
SDK, so no retries of a client's own). Everything else comes from ``oncoeval.backends.api.ApiBackend``: the key read
from ``api_key_env`` and scrubbed from errors, the concurrency slots, the retries with
``Retry-After`` and backoff, the stop on a rejected key, the price, the spend cap's rounds,
``phi_safe`` false by default and the job's resources.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from oncoeval.backends.api import Answer, ApiBackend, Failure, api_schema, retry_after_s

CONFIG_SCHEMA = api_schema(
    {
        "url": {"description": "Base URL of the API (required, no default).", "type": "string"},
        "model": {"description": "Model name sent (required, no default).", "type": "string"},
    },
    key_env="TINY_API_KEY",
    required=["url", "model"],
)


class Backend(ApiBackend):
    name = "tiny_api"
    CONFIG_SCHEMA = CONFIG_SCHEMA
    url_key = "url"  # named by the cures of failed calls

    def connect(self) -> None:
        self.url = self.cfg["url"].rstrip("/") + "/chat/completions"

    def send(self, request) -> Answer:
        body = {"model": self.cfg["model"], "messages": request.messages}
        if "max_new_tokens" in request.params:
            body["max_tokens"] = int(request.params["max_new_tokens"])
        post = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(post, timeout=self.timeout_s) as reply:
            data = json.load(reply)
        choice, usage = data["choices"][0], data.get("usage") or {}
        return Answer(
            choice["message"]["content"],
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    def failure(self, exc: Exception) -> Failure | None:
        if isinstance(exc, urllib.error.HTTPError):
            retry_after = retry_after_s(exc.headers)
            return Failure(exc.code, retry_after)  # 401/403: the key (the base knows)
        if isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError):
            return Failure(kind="timeout")
        if isinstance(exc, urllib.error.URLError | ConnectionError):
            return Failure(kind="connection")
        return None
