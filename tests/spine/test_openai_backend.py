"""The `openai` backend against a local OpenAI-compatible server (tests/fake_openai_server.py)."""

from __future__ import annotations

import secrets
import threading
import time

import pytest
from fake_openai_server import answer_text
from helpers import openai_entry

from oncoeval.backends.api import Slots, cost_usd
from oncoeval.backends.openai_api import Backend, request_kwargs
from oncoeval.core.errors import ConfigError
from oncoeval.core.records import Request
from oncoeval.workflow.generate import effective_params

KEY_ENV = "ONCOEVAL_TEST_OPENAI_KEY"
SERVER_LATENCY = 0.05  # the shared `server` fixture's seconds per answer


def model_cfg(server, **overrides) -> dict:
    settings = {"id": "gpt-test", "concurrency": 4, "timeout_s": 5, "max_retries": 3}
    return openai_entry(server.url, KEY_ENV, settings, **overrides)


def make_requests(prompts, **params) -> list[Request]:
    params = {"temperature": 0.0, "max_new_tokens": 64, **params}
    return [
        Request(f"r{i}", [{"role": "user", "content": p}], dict(params))
        for i, p in enumerate(prompts)
    ]


def run(cfg: dict, requests: list[Request]) -> dict:
    """Answers by request_id, in the order the backend finished them (dict keeps order)."""
    prepared = [
        Request(r.request_id, r.messages, effective_params(r, cfg), r.meta) for r in requests
    ]
    backend = Backend(cfg)
    try:
        return {resp.request_id: resp for resp in backend.generate(prepared)}
    finally:
        backend.close()


def test_normal_calls_record_text_usage_cost_and_finish_reason(server):
    cfg = model_cfg(server, price={"prompt_per_1k": 0.5, "completion_per_1k": 1.5})
    prompts = ["what is a tumour", "define metastasis", "name one cytokine"]
    out = run(cfg, make_requests(prompts))
    assert sorted(out) == ["r0", "r1", "r2"]
    first = out["r0"]
    assert first.error is None
    assert first.text == answer_text("what is a tumour", "gpt-x")
    # "what is a tumour" is 4 words in; "[gpt-x] answer to: what is a tumour" is 7 words out.
    assert (first.prompt_tokens, first.completion_tokens) == (4, 7)
    assert first.cost_usd == pytest.approx(4 / 1000 * 0.5 + 7 / 1000 * 1.5)
    assert first.finish_reason == "stop"
    assert first.latency_s >= 0.05  # the server's latency
    body = server.bodies["what is a tumour"][0]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 64 and body["model"] == "gpt-x"
    assert all(server.calls[p] == 1 for p in prompts)


def test_token_cap_truncates_with_finish_reason_length(server):
    out = run(model_cfg(server), make_requests(["a b c d e f"], max_new_tokens=3))
    assert out["r0"].completion_tokens == 3
    assert out["r0"].finish_reason == "length"


def test_429_waits_for_retry_after_then_succeeds(server):
    server.script("limited", ["429:1"])
    out = run(model_cfg(server), make_requests(["limited"]))
    assert out["r0"].error is None and out["r0"].text == answer_text("limited", "gpt-x")
    assert server.calls["limited"] == 2
    gap = server.arrivals["limited"][1] - server.arrivals["limited"][0]
    # The client's own backoff for a first retry is 0.375-0.5 s: 1 s means Retry-After was read.
    assert 1.0 <= gap < 2.0


def test_500_and_stall_longer_than_timeout_end_in_success(server):
    server.script("flaky", ["500", "500"])
    server.script("stalled", ["stall:4"])
    started = time.perf_counter()
    out = run(model_cfg(server, timeout_s=0.5), make_requests(["flaky", "stalled", "fine"]))
    elapsed = time.perf_counter() - started
    assert [out[r].error for r in ("r0", "r1", "r2")] == [None, None, None]
    assert server.calls == {"flaky": 3, "stalled": 2, "fine": 1}
    assert out["r1"].text == answer_text("stalled", "gpt-x")
    assert elapsed < 4  # the stalled call was abandoned after the timeout, not waited out


def test_always_failing_request_becomes_error_row_while_the_rest_complete(server):
    server.script("doomed", always=500)
    prompts = ["doomed"] + [f"q{i}" for i in range(6)]
    out = run(model_cfg(server, max_retries=2), make_requests(prompts))
    assert len(out) == 7
    assert out["r0"].text is None
    assert out["r0"].error.startswith("InternalServerError") and "500" in out["r0"].error
    assert server.calls["doomed"] == 3  # first try + max_retries
    assert all(out[f"r{i}"].error is None for i in range(1, 7))
    # The failure is yielded last: the others did not wait for its retries.
    assert list(out)[-1] == "r0"


def test_concurrency_really_overlaps_requests(server):
    server.latency = 0.2
    prompts = [f"item {i}" for i in range(32)]
    started = time.perf_counter()
    out = run(model_cfg(server, concurrency=8), make_requests(prompts))
    elapsed = time.perf_counter() - started
    assert all(r.error is None for r in out.values())
    assert 6 <= server.max_in_flight <= 8  # bounded by, and close to, `concurrency`
    assert elapsed < 32 * 0.2 / 2  # one at a time would take 6.4 s; 8 at once about 0.8 s


def test_a_request_waiting_to_retry_leaves_its_slot_to_others(server):
    server.script("slow-limited", ["429:1"])
    others = [f"other {i}" for i in range(8)]
    out = run(model_cfg(server, concurrency=1), make_requests(["slow-limited"] + others))
    assert all(r.error is None for r in out.values())
    assert server.max_in_flight == 1
    limited_at, retried_at = server.arrivals["slow-limited"]
    during_wait = [p for p in others if limited_at < server.arrivals[p][0] < retried_at]
    # Eight 50 ms calls fit in the 1 s wait; holding the only slot while asleep would allow none.
    assert len(during_wait) >= 3


def test_reasoning_model_request_has_no_temperature(server):
    cfg = model_cfg(server, reasoning=True)
    out = run(cfg, make_requests(["think hard"], temperature=0.7, top_p=0.9, seed=3))
    assert out["r0"].error is None
    body = server.bodies["think hard"][0]
    assert "temperature" not in body and "top_p" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 64 and body["seed"] == 3


def test_sampling_params_and_generation_block_reach_the_server():
    cfg = {"id": "m", "model": "x", "generation": {"presence_penalty": 0.5}}
    req = Request("r", [{"role": "user", "content": "hi"}], {"temperature": 0.8, "seed": 7})
    kwargs = request_kwargs(Request(req.request_id, req.messages, effective_params(req, cfg)), cfg)
    assert kwargs["temperature"] == 0.8 and kwargs["seed"] == 7
    assert kwargs["extra_body"] == {"presence_penalty": 0.5}


def test_cost_is_none_without_a_price():
    assert cost_usd(None, 10, 10) is None
    assert cost_usd({"prompt_per_1k": 2.0, "completion_per_1k": 4.0}, 500, 250) == 2.0


def test_identity_leaves_out_operational_settings():
    base = {"id": "a", "backend": "openai", "model": "gpt-x", "base_url": None}
    ident = Backend.identity(base)
    operational = {
        "concurrency": 32,
        "timeout_s": 5,
        "max_retries": 0,
        "price": {"prompt_per_1k": 1},
        "api_key_env": "OTHER",
        "resources": {"runtime": 10},
        "phi_safe": True,
    }
    assert Backend.identity({**base, **operational}) == ident
    for change in (
        {"model": "gpt-y"},
        {"base_url": "http://127.0.0.1:1/v1"},
        {"reasoning": True},
        {"generation": {"presence_penalty": 1}},
    ):
        assert Backend.identity({**base, **change}) != ident, change


def test_missing_key_is_named_by_variable_and_model_without_any_value():
    cfg = {"id": "gpt-test", "backend": "openai", "model": "x", "api_key_env": "MY_KEY_VAR"}
    (problem,) = Backend.config_problems(cfg, env={})
    assert "MY_KEY_VAR" in problem and "gpt-test" in problem
    assert Backend.config_problems(cfg, env={"MY_KEY_VAR": "sk-abc"}) == []
    azure = {**cfg, "azure": {"endpoint_env": "MY_AZURE_URL", "api_version": "2024-10-21"}}
    (problem,) = Backend.config_problems(azure, env={"MY_KEY_VAR": "sk-abc"})
    assert "MY_AZURE_URL" in problem


def test_backend_refuses_to_start_without_its_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ConfigError, match=KEY_ENV):
        Backend({"id": "m", "backend": "openai", "model": "x", "api_key_env": KEY_ENV})


def test_rejected_key_is_not_quoted_in_the_error_row(server, monkeypatch):
    wrong = "sk-wrong-" + secrets.token_hex(16)
    monkeypatch.setenv(KEY_ENV, wrong)
    out = run(model_cfg(server), make_requests(["hello"]))
    error = out["r0"].error
    assert error.startswith("AuthenticationError")
    assert wrong not in error and wrong[8:] not in error


def test_a_waiting_retry_gets_the_next_free_slot_before_a_first_attempt():
    slots = Slots(1)
    slots.acquire()
    order = []

    def take(name, retry):
        slots.acquire(retry)
        order.append(name)
        slots.release()

    fresh = threading.Thread(target=take, args=("fresh", False))
    fresh.start()
    time.sleep(0.05)  # the first attempt queues first...
    retry = threading.Thread(target=take, args=("retry", True))
    retry.start()
    time.sleep(0.05)
    slots.release()  # ...but the retry goes first
    fresh.join(2)
    retry.join(2)
    assert order == ["retry", "fresh"]
