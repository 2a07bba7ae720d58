"""Secrets never leave the process (issue #36, item 2): keys read strictly and scrubbed from
every row, log and cache line; URL credentials redacted in identity, provenance and messages.

The real `openai` client against tests/fake_openai_server.py on 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import sys

import pytest
from fake_openai_server import FakeOpenAIServer
from helpers import openai_entry, write_request_set

from oncoeval.backends.failures import cure
from oncoeval.backends.openai_api import Backend
from oncoeval.core import credentials
from oncoeval.core.io import setup_script_logging
from oncoeval.core.records import read_responses
from oncoeval.report.provenance import model_record
from oncoeval.workflow.generate import run_generate

KEY_ENV = "ONCOEVAL_TEST_SECRETS_KEY"


@pytest.fixture(autouse=True)
def _forget_keys():
    yield
    credentials.forget_all()


def model_cfg(url, **extra) -> dict:
    return openai_entry(url, KEY_ENV, {"concurrency": 2, "timeout_s": 5, "max_retries": 0}, **extra)


def generate(tmp_path, cfg, prompts):
    requests = write_request_set(tmp_path / "set.jsonl", prompts)
    out = tmp_path / "responses.jsonl"
    run_generate(
        requests, out, cfg, tmp_path / "cache", "probe", "set", progress=False,
        max_failed_share=1.0, outcome_path=tmp_path / "outcome.json",
    )  # fmt: skip
    return {r.request_id: r for r in read_responses(out)}


def everything_written(tmp_path) -> str:
    return "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


def unshaped_key() -> str:
    """A key not shaped `sk-...` (no pattern would catch it: only knowing the key does)."""
    return "proj" + secrets.token_hex(20)


def test_a_key_with_a_trailing_carriage_return_is_stripped_and_works(tmp_path, monkeypatch):
    key = unshaped_key()
    monkeypatch.setenv(KEY_ENV, key + "\r")  # read from a CRLF .env
    with FakeOpenAIServer(api_key=key) as server:
        assert Backend.config_problems(model_cfg(server.url)) == []
        rows = generate(tmp_path, model_cfg(server.url), ["hello", "there"])
    assert all(r.error is None and r.text for r in rows.values()), rows
    assert key not in everything_written(tmp_path)


def test_a_key_with_a_control_character_inside_is_refused_naming_the_variable(monkeypatch):
    key = unshaped_key()
    monkeypatch.setenv(KEY_ENV, key[:10] + "\n" + key[10:])
    (problem,) = Backend.config_problems(model_cfg("http://127.0.0.1:9/v1"))
    assert KEY_ENV in problem and "control character" in problem
    assert key[:10] not in problem and key[10:] not in problem


@pytest.mark.parametrize("value", ["sk-proj-" + "a1B2" * 10, "a1b2c3d4e5f6a7b8c9d0e1f2a3b4"])
def test_a_key_written_where_its_variable_name_goes_is_refused_without_echoing_it(value):
    (problem,) = Backend.config_problems(model_cfg(None, api_key_env=value), env={value: "x"})
    assert "api_key_env" in problem and "not an environment variable name" in problem
    assert value not in problem and value[:12] not in problem
    # Ordinary names stay accepted.
    assert Backend.config_problems(model_cfg(None, api_key_env="MY_KEY"), env={"MY_KEY": "k"}) == []


def test_a_server_echoing_the_key_gets_it_masked_before_the_cache(tmp_path, monkeypatch):
    key = unshaped_key()
    monkeypatch.setenv(KEY_ENV, key)
    with FakeOpenAIServer(api_key=key) as server:
        server.script("echo", ["echo-key"])
        rows = generate(tmp_path, model_cfg(server.url), ["echo"])
    assert rows["r0"].text.endswith("Bearer ***")
    cache = everything_written(tmp_path / "cache")
    assert "Bearer ***" in cache and key not in cache
    assert key not in everything_written(tmp_path)


def test_a_rejected_unshaped_key_appears_in_no_row_log_or_stderr(tmp_path, monkeypatch, capsys):
    key = unshaped_key()
    monkeypatch.setenv(KEY_ENV, key)
    log_path = tmp_path / "logs" / "job.log"
    saved = sys.stderr, logging.getLogger().handlers[:], sys.excepthook
    try:
        setup_script_logging(log_path)
        with FakeOpenAIServer(api_key="another-" + unshaped_key()) as server:
            rows = generate(tmp_path, model_cfg(server.url), ["hello"])
        # A library that quotes the key in its own log line or warning on stderr.
        logging.getLogger("somelib").warning("auth failed for %s", key)
        print(f"traceback: Bearer {key!r}", file=sys.stderr)
        sys.stderr.flush()
    finally:
        sys.stderr, logging.getLogger().handlers[:], sys.excepthook = saved
    assert rows["r0"].error.startswith("AuthenticationError")
    written = everything_written(tmp_path)
    assert "auth failed for ***" in log_path.read_text()
    assert key not in written and key not in capsys.readouterr().err


def test_base_url_credentials_stay_out_of_identity_provenance_cures_and_errors(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, unshaped_key())
    with socket.socket() as s:  # a port with nothing behind it: the connection fails
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://proxyuser:hunter2pass@127.0.0.1:{port}/v1?api_key=qtoken77&region=eu"
    cfg = model_cfg(url)
    ident = Backend.identity(cfg)
    # The endpoint's identity drops the userinfo (one proxy, whoever logs in) and masks the
    # credential query value.
    assert ident["base_url"] == f"http://127.0.0.1:{port}/v1?api_key=***&region=eu"
    record = json.dumps(model_record(cfg, tmp_path))
    message = cure("connection", cfg)
    rows = generate(tmp_path, cfg, ["hello"])
    assert "could not reach" in rows["r0"].error
    for text in (
        json.dumps(ident),
        record,
        message,
        rows["r0"].error,
        everything_written(tmp_path),
    ):
        assert "hunter2pass" not in text and "proxyuser" not in text and "qtoken77" not in text
    # A base_url without credentials keeps its identity: existing caches stay valid.
    for plain in ("http://127.0.0.1:8000/v1", "https://api.example.org/v1?region=eu", None):
        assert Backend.identity(model_cfg(plain))["base_url"] == plain


def test_scrub_masks_every_form_of_a_registered_key():
    key = unshaped_key()
    credentials.register(key + "\r")
    for text in (key, repr(key + "\r"), json.dumps(key + "\r"), f"Bearer {key}\r\n"):
        assert key not in credentials.scrub(text) and "***" in credentials.scrub(text)
