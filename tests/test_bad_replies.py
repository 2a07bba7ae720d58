"""The hostile-server corpus (issue #36, items 1, 4, 5 and 8): what a broken or hostile
OpenAI-compatible server sends can fail a call, but never poison the cache, fool the spend cap,
send a prompt elsewhere or hold a job forever.

Each case runs the real `openai` client through ``run_generate`` against
tests/fake_openai_server.py on 127.0.0.1, scripted to misbehave (omit or spoil usage, answer
with a list or a number, an answer of two million characters, a gzip bomb, another model's name,
a redirect, a trickling body), and checks the responses, the cache and what the server saw.
"""

from __future__ import annotations

import json
import logging
import math
import socket
import time

import pytest
from conftest import generate_rows
from fake_openai_server import answer_text
from helpers import openai_entry, write_request_set

from oncoeval.backends.api import MAX_CHARS_PER_TOKEN
from oncoeval.backends.openai_api import MAX_BODY_BYTES, Backend
from oncoeval.models.cache import ResponseCache
from oncoeval.report import summary, tables
from oncoeval.workflow.generate import JobRequests

KEY_ENV = "ONCOEVAL_TEST_HOSTILE_KEY"


def model(server, **overrides) -> dict:
    settings = {"id": "gpt-hostile", "concurrency": 1, "timeout_s": 5, "max_retries": 0}
    return openai_entry(server.url, KEY_ENV, settings, **overrides)


def requests_file(tmp_path, prompts, max_new_tokens=16, name="requests.jsonl"):
    return write_request_set(tmp_path / name, prompts, max_new_tokens=max_new_tokens)


def cached_rows(tmp_path) -> list[dict]:
    """Every line of every cache file under ``tmp_path/cache``, as text and decoded."""
    rows = []
    for file in sorted((tmp_path / "cache").rglob("*.jsonl")):
        for line in file.read_text().splitlines():
            assert "Infinity" not in line and "NaN" not in line
            rows.append(json.loads(line))
    return rows


# ------------------------------------------------------------------ 1. spend the cap can count
# $1 a token each way. "alpha beta N" is 12 bytes: its worst case is 12 + 8 (the template's) = 20
# prompt tokens plus max_new_tokens 16 = $36 a call, so a $100 cap allows three calls.
PRICE = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
WORST = 36.0
UNUSABLE_USAGE = ["no-usage", "usage:-5000", "usage:1e400", "usage:1.5", "usage:99999999999"]


@pytest.mark.parametrize("step", UNUSABLE_USAGE)
def test_a_priced_call_without_usable_usage_counts_at_its_worst_case(server, tmp_path, step):
    prompts = [f"alpha beta {i}" for i in range(10)]
    for p in prompts:
        server.script(p, always=None, steps=[step])
    cfg = model(server, price=PRICE, max_cost_usd=100.0)
    rows = generate_rows(tmp_path, requests_file(tmp_path, prompts), cfg, "a", max_failed_share=1)
    assert server.stats()["total_calls"] == 3  # not 10: the cap counted what it could not see
    answered = [r for r in rows if r["error"] is None]
    assert len(answered) == 3
    for row in answered:
        assert row["cost_usd"] == pytest.approx(WORST) and row["cost_estimated"] is True
        assert row["prompt_tokens"] is None or row["prompt_tokens"] >= 0
    refused = [r["error"] for r in rows if r["error"] is not None]
    assert len(refused) == 7
    assert all("server reports no usable usage" in e for e in refused)
    assert all(r["error_kind"] == "cap" for r in rows if r["error"] is not None)
    stored = cached_rows(tmp_path)
    assert len(stored) == 3
    assert all(math.isfinite(r["response"]["cost_usd"]) for r in stored)
    assert all(r["response"]["cost_usd"] >= 0 for r in stored)
    # A later job of the model reads that cache and starts from $108 spent: it sends nothing.
    server.reset()
    again = generate_rows(tmp_path, requests_file(tmp_path, prompts), cfg, "b", max_failed_share=1)
    assert server.stats()["total_calls"] == 0
    assert sum(r["error"] is None for r in again) == 3


def test_usage_the_server_reports_is_still_what_a_call_costs(server, tmp_path):
    cfg = model(server, price=PRICE, max_cost_usd=100.0)
    (row,) = generate_rows(tmp_path, requests_file(tmp_path, ["alpha beta"]), cfg, "a")
    # 2 words in, "[gpt-x] answer to: alpha beta" 5 words out: $7, as the server counted.
    assert row["cost_usd"] == pytest.approx(7.0) and row["cost_estimated"] is False


def test_the_summary_never_prices_an_answer_of_unknown_cost_at_zero(tmp_path):
    folder = tmp_path / "results" / "adhoc" / "responses"
    rows = {
        # An answer from a cache written before usage was checked: its cost is unknown.
        "unknown": [{"request_id": "1", "text": "x", "cost_usd": None}],
        # Only failed calls: nothing was spent.
        "failed": [{"request_id": "1", "text": None, "error": "APITimeoutError: x"}],
        "known": [
            {"request_id": "1", "text": "x", "cost_usd": 0.5},
            {"request_id": "2", "text": "y", "cost_usd": 0.25, "cached": True},
        ],
    }
    for name, lines in rows.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    usage = {row["model"]: row for row in summary.usage_rows(tmp_path)}
    assert usage["unknown"]["cost_usd"] is None
    assert tables.format_usd(usage["unknown"]["cost_usd"]) != "$0.0000"
    assert usage["failed"]["cost_usd"] == 0.0
    assert usage["known"]["cost_usd"] == pytest.approx(0.75)


# ------------------------------------------------------------ 4. replies checked before caching
def test_content_as_text_parts_is_joined_and_cached(server, tmp_path):
    server.script("alpha", ["content-list"])
    (row,) = generate_rows(tmp_path, requests_file(tmp_path, ["alpha"]), model(server), "a")
    assert row["error"] is None and row["text"] == answer_text("alpha", "gpt-x")
    assert [r["response"]["text"] for r in cached_rows(tmp_path)] == [row["text"]]


def test_content_that_is_a_number_fails_the_call_and_poisons_nothing(server, tmp_path):
    server.script("alpha", ["content-number"])
    requests = requests_file(tmp_path, ["alpha", "beta"])
    rows = generate_rows(tmp_path, requests, model(server), "a", max_failed_share=1)
    assert rows[0]["text"] is None and rows[0]["error"].startswith("BadReply")
    assert "int, not text" in rows[0]["error"] and rows[0]["error_kind"] == "bad_reply"
    assert rows[1]["error"] is None
    assert len(cached_rows(tmp_path)) == 1
    # Every later job of the model runs: the failed request is asked again and answered.
    again = generate_rows(tmp_path, requests, model(server), "b")
    assert [r["error"] for r in again] == [None, None]
    assert server.calls["alpha"] == 2 and server.calls["beta"] == 1


def test_an_answer_longer_than_max_new_tokens_allows_fails_the_call(server, tmp_path):
    server.script("alpha", ["long:2000000"])
    server.script("beta", [f"long:{16 * MAX_CHARS_PER_TOKEN}"])  # long, but within the margin
    rows = generate_rows(
        tmp_path, requests_file(tmp_path, ["alpha", "beta"]), model(server), "a",
        max_failed_share=1,
    )  # fmt: skip
    assert rows[0]["text"] is None
    assert "2,000,000 characters, more than max_new_tokens=16" in rows[0]["error"]
    assert rows[1]["error"] is None and len(rows[1]["text"]) == 16 * MAX_CHARS_PER_TOKEN
    assert [len(r["response"]["text"]) for r in cached_rows(tmp_path)] == [512]


def test_a_gzip_bomb_is_cut_at_the_body_limit_and_a_gzip_answer_is_read(server, tmp_path):
    server.script("bomb", [f"gzip:{3 * MAX_BODY_BYTES}"])
    server.script("zipped", ["gzip:1000000"])
    requests = requests_file(tmp_path, ["bomb", "zipped"], max_new_tokens=100_000)
    started = time.monotonic()
    cfg = model(server, max_retries=2)
    rows = generate_rows(tmp_path, requests, cfg, "a", max_failed_share=1)
    assert time.monotonic() - started < 10
    assert rows[0]["text"] is None and rows[0]["error"].startswith("BadReply")
    assert f"larger than {MAX_BODY_BYTES:,} bytes" in rows[0]["error"]
    assert server.calls["bomb"] == 1  # not asked again: a bomb is a bomb every time
    assert rows[1]["error"] is None and rows[1]["text"] == " " * 1_000_000


def test_an_answer_from_another_model_is_kept_and_flagged(server, tmp_path, caplog):
    server.script("alpha", ["other-model"])
    with caplog.at_level(logging.WARNING):
        rows = generate_rows(
            tmp_path, requests_file(tmp_path, ["alpha", "beta"]), model(server), "a"
        )
    assert rows[0]["served_model"] == "another-model-entirely" and rows[0]["other_model"]
    assert rows[1]["served_model"] == "gpt-x" and not rows[1]["other_model"]
    assert "the server says 'another-model-entirely' answered" in caplog.text
    assert [r["response"]["other_model"] for r in cached_rows(tmp_path)].count(True) == 1


# Lines of a cache file a read must skip, each with what its warning names.
BAD_CACHE_LINES = [
    ('{"key": "k", "response": "just text"}', "response must be an object"),
    ('["key", "response"]', 'expected {"key"'),
    ('{"key": "k", "response": {"request_id": "a"}}', "needs a request_id and a text string"),
    ('{"response": {"request_id": "a", "text": "t"}}', 'expected {"key"'),
    ('{"key": "k", "response": {"request_id": "a", "text": ["a", "b"]}}', "a text string"),
    ('{"key": "k", "response": {"request_id": "a", "text": "t", "cost_usd": Infinity}}', "cost"),
    ('{"key": "k", "response": {"request_id": "a", "text": "t", "cost_usd": -199.87}}', "cost"),
    ('{"key": "k", "response": {"request_id": "a", "text": "t", "prompt_tokens": NaN}}', "prompt"),
    ("[" * 100_000 + "]" * 100_000, "not a JSON line"),
]


@pytest.mark.parametrize(
    "line,problem",
    BAD_CACHE_LINES,
    ids=["str", "list", "no-text", "no-key", "text-list", "inf", "negative", "nan", "deep"],
)
def test_a_bad_cache_line_is_skipped_with_a_warning_naming_file_and_line(
    server, tmp_path, caplog, line, problem
):
    folder = tmp_path / "cache" / "gpt-hostile"
    folder.mkdir(parents=True)
    ledger = ResponseCache(tmp_path / "cache", "gpt-hostile", "x").ledger()
    bad = folder / "other-job.jsonl"
    good = '{"key": "x", "response": {"request_id": "z", "text": "fine", "cost_usd": 2.0}}'
    bad.write_text(good + "\n" + line + "\n")
    assert ledger.new_spend() == 2.0  # what another job's spend counts: the good line only
    cfg = model(server, price=PRICE, max_cost_usd=100.0)
    with caplog.at_level(logging.WARNING):
        rows = generate_rows(tmp_path, requests_file(tmp_path, ["alpha", "beta"]), cfg, "a")
    assert [r["error"] for r in rows] == [None, None]
    assert server.stats()["total_calls"] == 2
    assert f"{bad} line 2" in caplog.text and problem in caplog.text


def test_batch_lines_are_checked_as_synchronous_answers_are(key, tmp_path):
    from fake_batch_server import FakeBatchServer

    prompts = ["no usage", "a number", "too long", "fine"]
    with FakeBatchServer(api_key=key) as server:
        server.spoilt.update(
            {"no usage": "no-usage", "a number": "content-number", "too long": "long:100000"}
        )
        cfg = model(server, batch=True, batch_poll_s=0.01, batch_wait_s=20, price=PRICE)
        rows = generate_rows(
            tmp_path, requests_file(tmp_path, prompts), cfg, "a", max_failed_share=1
        )
    # "no usage" is 8 bytes: 8 + 8 + 16 tokens at the batch price, half of $1 a token.
    assert rows[0]["error"] is None and rows[0]["cost_estimated"]
    assert rows[0]["cost_usd"] == pytest.approx(16.0)
    assert rows[1]["error"].startswith("BadReply") and "int, not text" in rows[1]["error"]
    assert rows[2]["error"].startswith("BadReply") and "100,000 characters" in rows[2]["error"]
    assert rows[3]["error"] is None and not rows[3]["cost_estimated"]
    assert sorted(r["response"]["request_id"] for r in cached_rows(tmp_path)) == ["r0", "r3"]


# -------------------------------------------------------------------- 5. endpoints are identities
@pytest.mark.parametrize("status", [302, 307])
def test_a_redirected_post_is_a_failed_call_naming_where_and_sends_nothing_there(
    server, tmp_path, status
):
    server.script("alpha", [f"redirect:{status}"])
    rows = generate_rows(
        tmp_path, requests_file(tmp_path, ["alpha", "beta"]), model(server), "a",
        max_failed_share=1,
    )  # fmt: skip
    error = rows[0]["error"]
    assert rows[0]["text"] is None and error.startswith("Redirected")
    assert f"answered {status}" in error and "/elsewhere/v1/chat/completions" in error
    assert rows[0]["error_kind"] == "redirect"
    assert server.elsewhere == []  # neither a GET nor the prompt went to the other address
    assert rows[1]["error"] is None
    assert [r["response"]["request_id"] for r in cached_rows(tmp_path)] == ["r1"]


def test_the_endpoint_taken_from_openai_base_url_is_part_of_the_cache_key(
    server, tmp_path, monkeypatch, key
):
    from fake_openai_server import FakeOpenAIServer

    cfg = model(server)
    del cfg["base_url"]
    requests = requests_file(tmp_path, ["alpha"])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    (first,) = generate_rows(tmp_path, requests, cfg, "a")
    assert first["error"] is None and server.calls["alpha"] == 1
    with FakeOpenAIServer(api_key=key) as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        (second,) = generate_rows(tmp_path, requests, cfg, "b")
        assert second["error"] is None and other.calls["alpha"] == 1  # asked, not served
        assert Backend.provenance(cfg, tmp_path)["endpoint"] == other.url


def test_a_trailing_slash_or_credentials_do_not_make_another_endpoint(
    server, tmp_path, monkeypatch
):
    """Normalising must not re-pay every answer either: a plain base_url, and OpenAI's own API
    reached without one, keep the identity (and so the cache keys) they had."""
    requests = requests_file(tmp_path, ["alpha"])
    generate_rows(tmp_path, requests, model(server), "a")
    (row,) = generate_rows(tmp_path, requests, model(server, base_url=server.url + "/"), "b")
    assert row["cached"] and server.calls["alpha"] == 1
    slash = Backend.identity(model(server, base_url=server.url + "/"))["base_url"]
    userinfo = server.url.replace("http://", "http://user:secret@")
    assert slash == Backend.identity(model(server, base_url=userinfo))["base_url"] == server.url
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    plain = {"id": "m", "backend": "openai", "model": "gpt-x"}
    assert Backend.identity({**plain, "base_url": None})["base_url"] is None
    assert "base_url" not in Backend.identity(plain)
    assert Backend.identity(model(server))["base_url"] == server.url


# ------------------------------------------------------------------- 8. nothing waits forever
def test_a_trickling_body_is_cut_at_timeout_s(server, tmp_path):
    # About 300 bytes at 0.05 s each would take 15 s; each read alone is quick.
    server.script("alpha", ["trickle:0.05"])
    started = time.monotonic()
    (row,) = generate_rows(
        tmp_path, requests_file(tmp_path, ["alpha"]), model(server, timeout_s=1), "a",
        max_failed_share=1,
    )  # fmt: skip
    assert time.monotonic() - started < 5
    assert row["error"].startswith("APITimeoutError") and "timeout_s=1" in row["error"]
    assert row["error_kind"] == "timeout"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "content",
    [b"\x00\xffnot json", b"[1, 2]", json.dumps({"host": socket.gethostname(), "pid": "x"})],
    ids=["garbage", "list", "pid-text"],
)
def test_an_unreadable_claim_goes_stale_after_claim_stale_s(server, tmp_path, content):
    cfg = model(server)
    requests = requests_file(tmp_path, ["alpha"])
    job = JobRequests.read(requests, cfg, Backend)
    claims = tmp_path / "cache" / "gpt-hostile" / ".claims"
    claims.mkdir(parents=True)
    for key in job.distinct:
        (claims / f"{key}.json").write_bytes(
            content if isinstance(content, bytes) else content.encode()
        )
    started = time.monotonic()
    (row,) = generate_rows(tmp_path, requests, cfg, "a", claim_stale_s=0.5)
    assert row["error"] is None and server.calls["alpha"] == 1
    assert time.monotonic() - started < 10
    assert not list(claims.iterdir())


# --------------------------------------------------------------- a stopped job names its cure
@pytest.mark.parametrize(
    "step,cure",
    [
        ("redirect:302", "if you trust that address, set models[gpt-hostile].base_url"),
        ("content-number", "check that models[gpt-hostile].base_url is an OpenAI-compatible"),
        ("long:2000000", "keeps to the token cap"),
        ("trickle:0.05", "raise models[gpt-hostile].timeout_s"),
    ],
    ids=["redirect", "number", "long", "trickle"],
)
def test_a_job_stopped_by_a_hostile_reply_names_the_cure(server, tmp_path, step, cure):
    from oncoeval.workflow.generate import GenerationFailed

    server.script("alpha", [step])
    with pytest.raises(GenerationFailed) as info:
        generate_rows(tmp_path, requests_file(tmp_path, ["alpha"]), model(server, timeout_s=1), "a")
    assert "To fix:" in str(info.value) and cure in str(info.value)
