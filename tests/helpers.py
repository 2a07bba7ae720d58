"""Setups many tests share: an `openai` model entry for the fake server and a request set.

Imported as `helpers` (tests/ is on the path, as for fake_openai_server); workflow fixtures and the
Snakemake runner stay in tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

from oncoeval.records import write_requests


def openai_entry(url: str, key_env: str, settings: dict | None = None, **overrides) -> dict:
    """A model entry ``gpt`` of the `openai` backend that asks model ``gpt-x`` at ``url`` with
    the key in ``key_env``; ``settings`` (a test module's own), then ``overrides`` (a test's),
    add keys or replace these."""
    return {
        "id": "gpt",
        "backend": "openai",
        "model": "gpt-x",
        "base_url": url,
        "api_key_env": key_env,
        **(settings or {}),
        **overrides,
    }


def request_rows(
    prompts, ids: str = "r{i}", max_new_tokens: int | None = 64, meta: str | None = None
) -> list[dict]:
    """One request row per prompt, a single user message each: id ``ids`` with ``{i}`` its
    place, temperature 0 and ``max_new_tokens`` (None: no parameters), ``{meta: i}`` as its meta
    when ``meta`` names a key."""
    params = {} if max_new_tokens is None else {"temperature": 0, "max_new_tokens": max_new_tokens}
    rows = []
    for i, prompt in enumerate(prompts):
        row = {
            "request_id": ids.format(i=i),
            "messages": [{"role": "user", "content": prompt}],
            "params": dict(params),
        }
        if meta:
            row["meta"] = {meta: i}
        rows.append(row)
    return rows


def write_request_set(path: Path, prompts, **rows) -> Path:
    """A request set file of ``request_rows(prompts, **rows)`` at ``path``."""
    write_requests(path, request_rows(prompts, **rows))
    return path
