"""Replies without text are failed calls, and every failure names its cure (issue #24, items 1
and 6).

`run_generate` with the real `openai` client against tests/fake_openai_server.py.
"""

from __future__ import annotations

import json
import secrets
import socket

import pytest
from fake_openai_server import REFUSAL, answer_text
from helpers import openai_entry, write_request_set

from oncoeval.core.records import read_responses
from oncoeval.workflow.calls import calls_table, failed_calls_report
from oncoeval.workflow.generate import GenerationFailed, run_generate

KEY_ENV = "ONCOEVAL_TEST_CURES_KEY"
SERVER_LATENCY = 0.01  # the shared `server` fixture's seconds per answer


def model_cfg(url, **extra) -> dict:
    return openai_entry(url, KEY_ENV, {"concurrency": 2, "timeout_s": 5, "max_retries": 1}, **extra)


def generate(tmp_path, cfg, prompts, name="out.jsonl", **kwargs):
    requests = write_request_set(tmp_path / "set.jsonl", prompts)
    out = tmp_path / "responses" / "gpt" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    kwargs.setdefault("outcome_path", tmp_path / "logs/probe/generate/gpt/set.outcome.json")
    counts = run_generate(
        requests, out, cfg, tmp_path / "cache", "probe", "set", progress=False, **kwargs
    )
    return counts, out


def test_filtered_and_null_replies_are_failed_calls_and_a_refusal_is_an_answer(tmp_path, server):
    server.script("filtered", ["filter", "filter"])
    server.script("filtered with text", ["filter-text", "filter-text"])
    server.script("null reply", ["null", "null"])
    server.script("refused", ["refuse"])
    prompts = ["filtered", "filtered with text", "null reply", "refused", "fine"]
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(server.url), prompts)
    message = str(err.value)
    assert "3 of 5 requests failed" in message
    assert "content filtered by the provider" in message and "have the filter relaxed" in message

    # Accepted as failures, they are error rows (never a text to score); the answered two came
    # from the cache.
    counts, out = generate(tmp_path, model_cfg(server.url), prompts, max_failed_share=1.0)
    rows = {r.request_id: r for r in read_responses(out)}
    for rid in ("r0", "r1"):
        assert rows[rid].text is None and rows[rid].finish_reason == "content_filter"
        assert rows[rid].error.startswith("content filtered by the provider")
    assert rows["r2"].text is None and rows["r2"].error.startswith("empty answer")
    assert rows["r3"].text == REFUSAL and rows["r3"].refused and rows["r3"].error is None
    assert rows["r4"].text == answer_text("fine", "gpt-x") and not rows["r4"].refused
    assert counts["errors"] == 3 and counts["cached"] == 2
    table = calls_table(tmp_path / "responses", ["gpt"], tmp_path / "calls.tsv")
    row = table.iloc[0]
    assert (row["n_requests"], row["n_failed"], row["n_refused"]) == (5, 3, 1)
    assert row["n_filtered"] == 2  # the two the content filter withheld

    # Failed calls are never cached: a plain rerun asks exactly the three again.
    server.reset()
    counts, out = generate(tmp_path, model_cfg(server.url), prompts)
    assert server.calls == {"filtered": 1, "filtered with text": 1, "null reply": 1}
    assert counts["errors"] == 0 and counts["cached"] == 2
    assert read_responses(out)[0].text == answer_text("filtered", "gpt-x")


def test_a_filtered_prompt_is_named_as_filtered(tmp_path, server):
    server.script("flagged", ["filter-prompt"])
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(server.url), ["flagged", "fine"])
    message = str(err.value)
    assert "BadRequestError" in message and "content filtered by the provider" in message
    assert "have the filter relaxed" in message and server.calls["flagged"] == 1


def test_a_cut_json_body_is_retried_then_reported_as_a_cut_body(tmp_path, server):
    server.script("torn", ["torn", "torn", "torn"])
    server.script("torn once", ["torn"])
    counts, out = generate(
        tmp_path, model_cfg(server.url), ["torn", "torn once"], max_failed_share=1.0
    )
    rows = read_responses(out)
    assert server.calls["torn"] == 2  # first try + max_retries, then reported
    assert rows[0].text is None and rows[0].error.startswith("CutBody: ")
    assert "cut off" in rows[0].error and "JSONDecodeError" not in rows[0].error
    assert rows[1].text == answer_text("torn once", "gpt-x")  # the retry answered it
    assert counts["cures"] == [
        "the server's answers were cut off in transit: a plain rerun asks only them again"
    ]


def test_a_body_dropped_in_transit_is_reported_as_a_cut_body(tmp_path, server):
    server.script("dropped", ["drop", "drop", "drop"])
    counts, out = generate(tmp_path, model_cfg(server.url), ["dropped"], max_failed_share=1.0)
    (row,) = read_responses(out)
    assert row.error.startswith("CutBody: ") and "complete message body" in row.error
    assert server.calls["dropped"] == 2


def test_a_connection_failure_names_the_base_url(tmp_path, key):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(url, max_retries=0), ["hello"])
    message = str(err.value)
    assert f"could not reach base_url {url}" in message
    assert "check models[gpt].base_url" in message
    assert "a plain rerun asks only the failed ones" not in message


def test_a_rejected_key_names_its_variable_and_promises_no_plain_rerun(
    tmp_path, server, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, "sk-wrong-" + secrets.token_hex(8))
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(server.url), ["a", "b", "c"])
    message = str(err.value)
    assert f"put a valid key in the environment variable {KEY_ENV}" in message
    assert "plain rerun" not in message
    report = failed_calls_report(tmp_path / "logs")
    assert (
        f"To fix: the API refused the key: put a valid key in the environment variable {KEY_ENV}"
        in report
    )
    assert "plain rerun" not in report


def test_the_spend_cap_says_raise_max_cost_usd_not_a_plain_rerun(tmp_path, server):
    cfg = model_cfg(
        server.url,
        concurrency=1,
        price={"prompt_per_1k": 1000, "completion_per_1k": 1000},
        max_cost_usd=5.0,
    )
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, cfg, ["one", "two", "three"])
    message = str(err.value)
    assert "raise models[gpt].max_cost_usd" in message and "plain rerun asks" not in message
    assert "To fix: the spend cap stopped the calls" in failed_calls_report(tmp_path / "logs")


def test_a_transient_failure_says_a_plain_rerun_cures_it(tmp_path, server):
    server.script("flaky", always=503)
    with pytest.raises(GenerationFailed, match="a plain rerun asks only the failed ones"):
        generate(tmp_path, model_cfg(server.url), ["flaky", "fine"])


def test_replayed_filtered_reply_is_an_error_row(tmp_path):
    stored = tmp_path / "stored.jsonl"
    stored.write_text(
        json.dumps({"request_id": "r0", "text": "", "finish_reason": "content_filter"})
        + "\n"
        + json.dumps({"request_id": "r1", "text": REFUSAL, "refused": True})
        + "\n"
    )
    cfg = {"id": "gpt", "backend": "replay", "path": str(stored)}
    counts, out = generate(tmp_path, cfg, ["a", "b"])
    rows = read_responses(out)
    assert rows[0].text is None and "content filtered by the provider" in rows[0].error
    assert rows[1].text == REFUSAL and rows[1].refused
    assert counts["errors"] == 1


def test_a_server_failing_every_call_is_named_not_called_transient(tmp_path, server):
    for prompt in ("one", "two", "three"):
        server.script(prompt, always=500)
    with pytest.raises(GenerationFailed) as err:
        generate(tmp_path, model_cfg(server.url), ["one", "two", "three"])
    named = f"every call to {server.url} failed with 500: check the server"
    assert named in str(err.value) and "transient" not in str(err.value)
    report = failed_calls_report(tmp_path / "logs")
    assert f"To fix: {named}" in report and "plain rerun asks" not in report
