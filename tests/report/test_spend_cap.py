"""The per-model spend cap and the usage in the `generate` done line (real openai client, local server)."""

from __future__ import annotations

import logging
import secrets

import pytest
from fake_openai_server import FakeOpenAIServer
from helpers import openai_entry, write_request_set

from oncoeval.core.io import read_jsonl
from oncoeval.workflow.generate import GenerationFailed, run_generate

KEY_ENV = "ONCOEVAL_TEST_OPENAI_KEY"


@pytest.fixture
def server(monkeypatch):
    key = "sk-test-" + secrets.token_hex(8)
    monkeypatch.setenv(KEY_ENV, key)
    with FakeOpenAIServer(api_key=key) as srv:
        yield srv


def priced_model(server, cap):
    # $1 a token each way: "alpha beta N" is 3 tokens in, "[gpt-x] answer to: alpha beta N"
    # 6 tokens out, so each call costs 3 + 6 = $9.
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
    return openai_entry(
        server.url, KEY_ENV, id="gpt-capped", concurrency=1, timeout_s=5, max_retries=0,
        price=price, max_cost_usd=cap,
    )  # fmt: skip


def write_six_requests(path):
    write_request_set(path, [f"alpha beta {i}" for i in range(6)], max_new_tokens=16)


def test_calls_stop_at_the_cap_and_the_rest_fail_with_that_reason(server, tmp_path, caplog):
    requests = tmp_path / "requests.jsonl"
    write_six_requests(requests)
    cfg = priced_model(server, cap=20.0)
    # Calls the cap stopped are failed calls: the job fails unless failures are accepted.
    with caplog.at_level(logging.INFO, logger="oncoeval.workflow.generate"):
        with pytest.raises(GenerationFailed, match=r"3 of 6 requests failed.*max_cost_usd"):
            run_generate(
                requests, tmp_path / "refused.jsonl", cfg, tmp_path / "cache", "adhoc", "set",
                progress=False,
            )  # fmt: skip
        assert sum(server.calls.values()) == 3 and not (tmp_path / "refused.jsonl").exists()
        counts = run_generate(
            requests, tmp_path / "out.jsonl", cfg, tmp_path / "cache", "adhoc", "set",
            progress=False, max_failed_share=1.0,
        )  # fmt: skip
    rows = read_jsonl(tmp_path / "out.jsonl")
    # $9, $18, then $27 >= $20: the third call passes the cap; no fourth call is made.
    assert sum(server.calls.values()) == 3
    answered = [r for r in rows if r["error"] is None]
    failed = [r for r in rows if r["error"] is not None]
    assert len(answered) == 3 and len(failed) == 3
    assert all(r["error"].startswith("max_cost_usd reached: $27.0000") for r in failed)
    assert all(r["text"] is None for r in failed)  # a failed call is never a score
    # The done line carries this job's tokens and cost: the three paid answers came from the
    # cache of the refused run, so this run made no call and spent nothing.
    assert counts["generated"] == 0 and counts["cached"] == 3 and counts["errors"] == 3
    assert counts["cost_usd"] is None
    done = [rec.getMessage() for rec in caplog.records if rec.getMessage().startswith("done:")]
    assert "'cost_usd': 27.0" in done[0] and "'prompt_tokens': 9" in done[0]

    # A rerun finds the spend in the model's cache: no call at all, the same three fail.
    again = run_generate(
        requests, tmp_path / "out2.jsonl", cfg, tmp_path / "cache", "adhoc", "set",
        progress=False, max_failed_share=1.0,
    )  # fmt: skip
    assert sum(server.calls.values()) == 3
    assert again["cached"] == 3 and again["errors"] == 3
    assert again["cost_usd"] is None  # nothing was called, nothing was spent


def test_without_a_cap_every_call_is_made(server, tmp_path):
    requests = tmp_path / "requests.jsonl"
    write_six_requests(requests)
    counts = run_generate(
        requests, tmp_path / "out.jsonl", priced_model(server, cap=None), tmp_path / "cache",
        "adhoc", "set", progress=False,
    )  # fmt: skip
    assert counts["errors"] == 0 and sum(server.calls.values()) == 6
    assert counts["cost_usd"] == pytest.approx(54.0)
