"""API backends share one base class: a second API backend is its transport only (issue #25).

The test-only backend `tiny_api` (tests/spine/tiny_backend/tiny_api.py, under 100 lines) posts
plain JSON with urllib to tests/fake_openai_server.py on 127.0.0.1, and is registered by one
``BACKEND_MODULES`` entry. Its key handling, retries, Retry-After waits, concurrency, rejected
key stop, price, spend cap, PHI default and job resources all come from
``oncoeval.backends.api.ApiBackend``; these tests run them through ``run_generate``.
"""

from __future__ import annotations

import inspect
import secrets
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer, answer_text
from helpers import write_request_set

from oncoeval import backends
from oncoeval.config import checks as oc
from oncoeval.core.records import read_responses
from oncoeval.workflow.generate import run_generate

TINY_DIR = Path(__file__).resolve().parent / "tiny_backend"
KEY_ENV = "ONCOEVAL_TEST_TINY_API_KEY"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.syspath_prepend(str(TINY_DIR))
    monkeypatch.setitem(backends.BACKEND_MODULES, "tiny_api", "tiny_api")
    key = "sk-tiny-" + secrets.token_hex(8)
    monkeypatch.setenv(KEY_ENV, key)
    return key


@pytest.fixture
def server(key):
    with FakeOpenAIServer(api_key=key) as srv:
        yield srv


def model(server, **over) -> dict:
    return {
        "id": "tiny-remote",
        "backend": "tiny_api",
        "url": server.url,
        "model": "tiny-x",
        "api_key_env": KEY_ENV,
        "timeout_s": 5,
        **over,
    }


def generate(tmp_path, cfg, prompts, **kwargs):
    requests = write_request_set(tmp_path / "requests.jsonl", prompts, max_new_tokens=None)
    out = tmp_path / "responses.jsonl"
    counts = run_generate(
        requests, out, cfg, tmp_path / "cache", "adhoc", "probe", progress=False, **kwargs
    )
    return counts, read_responses(out)


def test_the_second_api_backend_is_its_transport_only(key):
    module = backends.get_backend("tiny_api")
    source = inspect.getsourcefile(module)
    assert len(Path(source).read_text().splitlines()) < 100
    own = {name for name, value in vars(module).items() if callable(value)}
    assert own == {"connect", "send", "failure"}


def test_its_facts_come_from_the_base_class(key, monkeypatch):
    cfg = {"id": "t", "backend": "tiny_api", "url": "http://127.0.0.1:9/v1", "model": "m"}
    assert oc.schema_problems({"models": [cfg]}) == []
    cls = backends.get_backend("tiny_api")
    assert cls.phi_safe_default is False
    assert oc.models_by_id({"models": [cfg]})["t"]["phi_safe"] is False
    # one api_calls slot, no GPU, the API runtime the schema gives
    assert oc.generate_resources(cfg) == {"api_calls": 1, "mem_mb": 1000, "runtime": 240}
    assert oc.generate_threads(cfg) == 1
    assert cls.spend_round(cfg) == 8  # the schema's concurrency
    priced = dict(cfg, price={"prompt_per_1k": 2.0, "completion_per_1k": 4.0})
    assert cls.cost_bounds(priced, 1000, 500) == (2.0, 4.0)
    assert cls.cost_bounds(cfg, 1000, 500) == (None, None)
    # the key variable is checked before any job (the default variable, unset here)
    monkeypatch.delenv("TINY_API_KEY", raising=False)
    problems = cls.config_problems(cfg, env={})
    assert problems and "TINY_API_KEY" in problems[0] and "models[t].api_key_env" in problems[0]
    # concurrency and the price are operational: not in the model's identity
    assert "concurrency" not in cls.identity(dict(priced, concurrency=3))
    assert "price" not in cls.identity(priced)


def test_answers_retries_and_retry_after_come_from_the_base(server, tmp_path):
    server.script("busy", ["429:0.4"])
    server.script("flaky", ["500"])
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}  # $1 a token
    counts, rows = generate(tmp_path, model(server, price=price), ["busy", "flaky", "calm"])
    assert [r.text for r in rows] == [answer_text(p, "tiny-x") for p in ("busy", "flaky", "calm")]
    assert server.calls == {"busy": 2, "flaky": 2, "calm": 1}
    arrivals = server.arrivals["busy"]
    assert arrivals[1] - arrivals[0] >= 0.4  # the server's Retry-After, waited for
    # "busy": 1 token in, "[tiny-x] answer to: busy" 4 tokens out: $5
    assert rows[0].cost_usd == pytest.approx(5.0)
    assert counts["cost_usd"] == pytest.approx(sum(r.cost_usd for r in rows))


def test_a_retry_after_beyond_the_bound_fails_naming_it(server, tmp_path):
    server.script("busy", ["429:30"])
    started = time.monotonic()
    counts, rows = generate(
        tmp_path, model(server, max_retry_after_s=2), ["busy"], max_failed_share=1.0
    )
    assert time.monotonic() - started < 5 and server.calls["busy"] == 1
    assert "asked to wait 30 s" in rows[0].error and "max_retry_after_s=2" in rows[0].error


def test_concurrency_bounds_the_requests_in_flight(server, tmp_path):
    server.latency = 0.05
    prompts = [f"question {i}" for i in range(12)]
    _, rows = generate(tmp_path, model(server, concurrency=3), prompts)
    assert all(r.error is None for r in rows)
    assert server.max_in_flight <= 3


def test_a_rejected_key_stops_the_queue_and_never_shows(server, tmp_path, monkeypatch):
    wrong = "sk-wrong-" + secrets.token_hex(8)
    monkeypatch.setenv(KEY_ENV, wrong)
    prompts = [f"question {i}" for i in range(6)]
    counts, rows = generate(tmp_path, model(server, concurrency=1), prompts, max_failed_share=1.0)
    assert counts["errors"] == 6
    assert server.statuses == {401: 1}  # the first call; the rest were never sent
    assert all("not sent: the API rejected the key" in r.error for r in rows[1:])
    assert not any(wrong in r.error for r in rows)


def test_the_spend_cap_stops_the_calls(server, tmp_path):
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
    cfg = model(server, price=price, concurrency=1, max_cost_usd=12.0)
    prompts = ["alpha", "beta", "gamma", "delta"]  # $5 each
    counts, rows = generate(tmp_path, cfg, prompts, max_failed_share=1.0)
    assert [r.error is None for r in rows] == [True, True, True, False]
    assert rows[3].error.startswith("max_cost_usd reached")
    assert sum(server.calls.values()) == 3 and counts["generated"] == 3


# ------------------------------------------ a failure's kind is the backend's (issue #37, item 2)
def test_a_new_backends_rejected_key_gets_the_key_cure(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-wrong-" + secrets.token_hex(8))
    counts, rows = generate(tmp_path, model(server), ["alpha", "beta"], max_failed_share=1.0)
    assert {r.error_kind for r in rows} == {"key"} and rows[0].error_status == 401
    (cure,) = counts["cures"]
    assert cure.startswith("the API refused the key: put a valid key in the environment "
                           f"variable {KEY_ENV}")  # fmt: skip
    assert "plain rerun" not in cure


def test_a_new_backends_timeout_is_named_a_timeout(server, tmp_path):
    server.latency = 1.0
    cfg = model(server, timeout_s=0.3, max_retries=0)
    counts, rows = generate(tmp_path, cfg, ["alpha"], max_failed_share=1.0)
    assert rows[0].error_kind == "timeout"
    assert counts["cures"] == [
        "the server did not answer in time: a plain rerun asks only the failed ones (raise "
        "models[tiny-remote].timeout_s if it keeps happening)"
    ]


def test_a_server_failing_every_call_of_a_new_backend_is_named_not_transient(server, tmp_path):
    prompts = ["one", "two", "three"]
    for prompt in prompts:
        server.script(prompt, always=500)
    counts, rows = generate(tmp_path, model(server, max_retries=0), prompts, max_failed_share=1)
    assert {(r.error_kind, r.error_status) for r in rows} == {("server", 500)}
    (cure,) = counts["cures"]
    assert cure.startswith(f"every call to {server.url} failed with 500: check the server")
    assert "transient" not in cure
