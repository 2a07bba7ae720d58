"""Failed calls are visible and retried, never results (issue #13, items 2, 6, 9 and 10).

`run_generate` with the real `openai` client against tests/fake_openai_server.py.
"""

from __future__ import annotations

import json
import secrets
import time

import pytest
from fake_openai_server import answer_text
from helpers import openai_entry, write_request_set

from oncoeval.backends import api, openai_api
from oncoeval.core.records import read_responses
from oncoeval.workflow.calls import failed_calls_report, outcome_path_for
from oncoeval.workflow.generate import GenerationFailed, failed_share_allowed, run_generate

KEY_ENV = "ONCOEVAL_TEST_FAILED_KEY"
SERVER_LATENCY = 0.02  # the shared `server` fixture's seconds per answer


def model_cfg(server, **extra) -> dict:
    settings = {"concurrency": 4, "timeout_s": 5, "max_retries": 1}
    return openai_entry(server.url, KEY_ENV, settings, **extra)


def generate(tmp_path, cfg, prompts, **kwargs):
    requests = write_request_set(tmp_path / "set.jsonl", prompts, meta="i")
    out = tmp_path / "out.jsonl"
    kwargs.setdefault("outcome_path", tmp_path / "logs/probe/generate/gpt/set.outcome.json")
    counts = run_generate(
        requests, out, cfg, tmp_path / "cache", "probe", "set", progress=False, **kwargs
    )
    return counts, out


def test_identical_requests_are_sent_once_and_share_the_answer(tmp_path, server):
    prompts = ["same comparison"] * 5 + ["other comparison"] * 3
    counts, out = generate(tmp_path, model_cfg(server), prompts)
    assert server.calls == {"same comparison": 1, "other comparison": 1}
    rows = read_responses(out)
    assert [r.request_id for r in rows] == [f"r{i}" for i in range(8)]
    assert [r.meta["i"] for r in rows] == list(range(8))
    assert all(r.text == answer_text(p, "gpt-x") for r, p in zip(rows, prompts, strict=True))
    assert counts["distinct"] == 2 and counts["generated"] == 2 and counts["requests"] == 8


def test_a_failed_call_fails_the_job_keeps_the_answers_and_the_rerun_asks_only_it(tmp_path, server):
    prompts = ["fine one", "doomed", "fine two"]
    server.script("doomed", always=500)
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(server), prompts)
    message = str(err.value)
    for part in ("'gpt'", "'probe'", "'set'", "1 of 3 requests failed", "InternalServerError"):
        assert part in message
    assert not (tmp_path / "out.jsonl").exists()  # no table can be built from it
    assert server.calls["doomed"] == 2  # first try + max_retries

    server.script("doomed", ["ok"])
    server._always.clear()  # the outage is over
    server.reset()
    counts, out = generate(tmp_path, model_cfg(server), prompts)
    assert server.calls == {"doomed": 1}  # answered ones came from the cache
    assert counts["cached"] == 2 and counts["errors"] == 0
    assert all(r.error is None for r in read_responses(out))


def test_accepted_failures_are_error_rows_and_named_at_the_end(tmp_path, server):
    server.script("doomed", always=503)
    cfg = model_cfg(server, max_failed_share=0.5)
    share = failed_share_allowed(cfg, {"max_failed_share": 0.0})
    assert (
        share == 0.5 and failed_share_allowed(model_cfg(server), {"max_failed_share": 0.2}) == 0.2
    )
    counts, out = generate(tmp_path, cfg, ["doomed", "fine"], max_failed_share=share)
    rows = read_responses(out)
    assert rows[0].text is None and "InternalServerError" in rows[0].error
    assert rows[1].error is None and counts["errors"] == 1 and counts["accepted"]
    report = failed_calls_report(tmp_path / "logs")
    assert "gpt / probe: 1 of 2 requests failed; accepted by max_failed_share" in report
    assert "InternalServerError" in report
    assert failed_calls_report(tmp_path / "logs", since=time.time() + 60) == ""


def test_a_wrong_key_fails_the_job_without_sending_the_rest(tmp_path, server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-wrong-" + secrets.token_hex(8))
    prompts = [f"question {i}" for i in range(40)]
    with pytest.raises(GenerationFailed, match="40 of 40 requests failed.*AuthenticationError"):
        generate(tmp_path, model_cfg(server, concurrency=2), prompts)
    # Requests already in flight when the first 401 came back were sent; no others.
    assert 1 <= server.stats()["statuses"]["401"] <= 4
    outcome = json.loads((tmp_path / "logs/probe/generate/gpt/set.outcome.json").read_text())
    assert outcome["errors"] == 40 and outcome["accepted"] is False
    assert "sk-wrong" not in json.dumps(outcome)  # the key is scrubbed


def test_an_html_page_with_status_200_is_a_failure_not_an_answer(tmp_path, server):
    server.script("portal", ["html"])
    counts, out = generate(tmp_path, model_cfg(server), ["portal", "fine"], max_failed_share=1)
    rows = read_responses(out)
    assert rows[0].text is None and "not a chat completion" in rows[0].error
    assert rows[1].error is None
    assert not list((tmp_path / "cache/gpt").glob("*.jsonl"))[0].read_text().count("portal")


def test_a_cut_answer_records_finish_reason_length(tmp_path, server):
    server.script("long story", ["cut"])
    counts, out = generate(tmp_path, model_cfg(server), ["long story", "short"])
    rows = read_responses(out)
    assert [r.finish_reason for r in rows] == ["length", "stop"]
    assert counts["truncated"] == 1


@pytest.fixture
def short_client_limit(monkeypatch):
    """Shrink the client's own Retry-After limit (120 s) to 0.3 s, to test waits beyond it."""
    import openai._base_client as base_client

    monkeypatch.setattr(base_client, "MAX_RETRY_AFTER_DELAY", 0.3)
    monkeypatch.setattr(openai_api.Backend, "client_max_retry_after_s", 0.3)


def test_retry_after_beyond_the_client_limit_is_waited_for(tmp_path, server, short_client_limit):
    server.script("busy", ["429:0.8"])
    started = time.monotonic()
    counts, out = generate(tmp_path, model_cfg(server, max_retry_after_s=5), ["busy"])
    assert time.monotonic() - started >= 0.8
    assert read_responses(out)[0].text == answer_text("busy", "gpt-x")
    assert server.calls["busy"] == 2
    arrivals = server.arrivals["busy"]
    assert arrivals[1] - arrivals[0] >= 0.8


def test_retry_after_beyond_the_bound_fails_at_once_naming_it(tmp_path, server, short_client_limit):
    server.script("busy", ["429:30"])
    started = time.monotonic()
    with pytest.raises(GenerationFailed, match=r"asked to wait 30 s.*max_retry_after_s=2"):
        generate(tmp_path, model_cfg(server, max_retry_after_s=2), ["busy"])
    assert time.monotonic() - started < 5 and server.calls["busy"] == 1


def test_retry_after_parsing():
    assert api.retry_after_s({"retry-after": "7"}) == 7
    assert api.retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert api.retry_after_s({"retry-after": "soon"}) is None
    assert api.retry_after_s({}) is None
    wait = api.retry_after_s({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"})
    assert wait > 365 * 24 * 3600


def test_outcome_sits_next_to_the_log():
    path = outcome_path_for("logs/coral/generate/gpt/extract.log")
    assert str(path) == "logs/coral/generate/gpt/extract.outcome.json"
