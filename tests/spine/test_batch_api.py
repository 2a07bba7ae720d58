"""Batch mode (``batch: true``, issue #29): the real `openai` client against the files and
batches endpoints of tests/fake_batch_server.py, through oncoeval.workflow.generate.run_generate."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fake_batch_server import FakeBatchServer
from fake_openai_server import answer_text
from helpers import openai_entry, write_request_set

from oncoeval.backends.batch import BatchesInFlight, batch_price
from oncoeval.workflow.calls import failed_calls_report
from oncoeval.workflow.generate import run_generate

# The shared `key` fixture (tests/conftest.py) sets this variable.
KEY_ENV = "ONCOEVAL_TEST_BATCH_KEY"


@pytest.fixture
def server(key):
    with FakeBatchServer(api_key=key) as srv:
        yield srv


def model(server, **extra) -> dict:
    settings = {"timeout_s": 5, "max_retries": 0}
    batch = {"batch": True, "batch_poll_s": 0.01, "batch_wait_s": 20}
    return openai_entry(server.url, KEY_ENV, {**settings, **batch}, **extra)


def prompts(n: int) -> list[str]:
    return [f"question number {i}" for i in range(n)]


def write_requests(path: Path, texts: list[str]) -> Path:
    """The batch tests' request set: ids q00, q01, ..., 32 new tokens each."""
    return write_request_set(path, texts, ids="q{i:02d}", max_new_tokens=32)


def generate(tmp_path: Path, cfg: dict, n: int = 8, cache: str = "cache", **kw) -> list[dict]:
    requests = write_requests(tmp_path / "requests.jsonl", prompts(n))
    out = tmp_path / f"responses-{cache}.jsonl"
    run_generate(
        requests,
        out,
        cfg,
        tmp_path / cache,
        "adhoc",
        "probe",
        progress=False,
        max_failed_share=kw.pop("max_failed_share", 0.0),
        **kw,
    )
    return [json.loads(line) for line in out.open()]


def cache_rows(tmp_path: Path, cache: str = "cache") -> list[dict]:
    rows = []
    for path in sorted((tmp_path / cache / "gpt").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.open()]
    return rows


def batch_custom_ids(server) -> list[list[str]]:
    """The custom_ids of each batch created, in order."""
    return [[x["custom_id"] for x in server.lines_of[b]] for b in server.batches]


def test_batch_answers_and_cache_keys_are_the_synchronous_ones(tmp_path, server):
    batched = generate(tmp_path, model(server), cache="batch")
    assert server.stats()["total_calls"] == 0  # no synchronous call
    assert len(server.batches) == 1 and all(v == 1 for v in server.billed.values())
    assert [r["text"] for r in batched] == [answer_text(p, "gpt-x") for p in prompts(8)]
    assert all(r["error"] is None and r["completion_tokens"] for r in batched)
    assert server.files == {}  # input, output files deleted after collection
    assert not (tmp_path / "batch/gpt/.batches/adhoc--probe.json").exists()

    synchronous = generate(tmp_path, model(server, batch=False), cache="sync")
    assert server.stats()["total_calls"] == 8
    fields = ("request_id", "text", "finish_reason", "prompt_tokens", "completion_tokens")
    assert [[r[f] for f in fields] for r in batched] == [
        [r[f] for f in fields] for r in synchronous
    ]
    keys = {r["key"] for r in cache_rows(tmp_path, "batch")}
    assert keys == {r["key"] for r in cache_rows(tmp_path, "sync")} and len(keys) == 8

    # A rerun is served from the cache: no batch, no call.
    again = generate(tmp_path, model(server), cache="batch")
    assert len(server.batches) == 1 and all(r["cached"] for r in again)


def test_an_expired_batch_keeps_its_k_answers_and_resubmits_only_the_rest(tmp_path, server):
    server.plans = ["expire:3"]
    rows = generate(tmp_path, model(server))
    first, second = batch_custom_ids(server)
    assert len(first) == 8 and second == first[3:]  # n - k = 5 resubmitted
    assert [b["status"] for b in server.batches.values()] == ["expired", "completed"]
    assert all(r["error"] is None for r in rows) and len(cache_rows(tmp_path)) == 8
    assert sorted(server.billed.values()) == [1] * 8


def test_cancelled_and_failed_batches_keep_what_finished(tmp_path, server):
    server.plans = ["cancel:2", "fail"]
    rows = generate(tmp_path, model(server))
    ids = batch_custom_ids(server)
    assert [len(x) for x in ids] == [8, 6, 6] and ids[1] == ids[2] == ids[0][2:]
    assert all(r["error"] is None for r in rows)
    assert sorted(server.billed.values()) == [1] * 8


def test_unanswered_lines_fail_with_the_batch_reason_after_the_resubmission_limit(tmp_path, server):
    server.default_plan = "expire:2"
    cfg = model(server, batch_max_resubmits=1)
    rows = generate(tmp_path, cfg, n=6, max_failed_share=1.0)
    # 6 lines; 2 answered; 4 resubmitted once, 2 of them answered; 2 fail.
    assert [len(x) for x in batch_custom_ids(server)] == [6, 4]
    failed = [r for r in rows if r["error"] is not None]
    assert len(failed) == 2 and all(r["text"] is None for r in failed)
    assert all("expired" in r["error"] and "after resubmissions" in r["error"] for r in failed)
    assert len(cache_rows(tmp_path)) == 4  # failed calls are never cached


def test_lines_of_the_error_file_are_failed_calls_with_their_message(tmp_path, server):
    server.line_errors = {"question number 1": "this line is malformed"}
    rows = generate(tmp_path, model(server), n=4, max_failed_share=1.0)
    assert len(server.batches) == 1  # an error line is not resubmitted by the job
    assert rows[1]["text"] is None and "this line is malformed" in rows[1]["error"]
    assert all(r["error"] is None for i, r in enumerate(rows) if i != 1)
    with pytest.raises(Exception, match="this line is malformed"):  # over max_failed_share
        generate(tmp_path, model(server), n=4, cache="strict")


def test_batches_split_by_line_and_byte_limits(tmp_path, key):
    with FakeBatchServer(api_key=key, max_lines=3) as server:
        generate(tmp_path, model(server, batch_max_lines=3), n=8)
        assert [len(x) for x in batch_custom_ids(server)] == [3, 3, 2]
        assert server.refused == []
    line_bytes = len(next(iter(server.lines_of.values()))[0]["custom_id"]) + 200
    with FakeBatchServer(api_key=key, max_bytes=2 * line_bytes) as server:
        generate(tmp_path, model(server, batch_max_bytes=2 * line_bytes), n=5, cache="bytes")
        sizes = [len(x) for x in batch_custom_ids(server)]
        assert sum(sizes) == 5 and max(sizes) <= 2 and server.refused == []


def test_a_batch_refused_for_the_token_limit_is_submitted_again_later(tmp_path, key):
    # The provider counts 3 prompt words + 32 new tokens = 35 tokens a line and queues at most
    # 200: a second batch of 4 lines (140) is refused while the first runs.
    with FakeBatchServer(api_key=key, max_lines=4, enqueued_token_limit=200) as server:
        cfg = model(server, batch_max_lines=4, batch_max_resubmits=0)
        rows = generate(tmp_path, cfg, n=8)
        assert "token_limit_exceeded" in server.refused  # the second batch, while the first ran
        assert all(r["error"] is None for r in rows)  # not lost, and not counted as resubmits
        assert sorted(server.billed.values()) == [1] * 8
    with FakeBatchServer(api_key=key, enqueued_token_limit=100) as server:
        # A batch too large for the provider even alone (8 x 35 tokens): it counts as a
        # resubmission, then its lines are failed calls naming the reason.
        cfg = model(server, batch_max_resubmits=1)
        rows = generate(tmp_path, cfg, n=8, cache="alone", max_failed_share=1.0)
        assert server.refused == ["token_limit_exceeded"] * 2
        assert all("token_limit_exceeded" in r["error"] for r in rows)
    with FakeBatchServer(api_key=key, enqueued_token_limit=200) as server:
        # With the budget in the model entry, no batch is refused.
        cfg = model(server, batch_enqueued_tokens=150)
        rows = generate(tmp_path, cfg, n=8, cache="budget")
        assert server.refused == [] and all(r["error"] is None for r in rows)
        # oncoeval's estimate: 5 prompt tokens (characters / 4) + 32 a line, 4 lines a batch.
        assert max(len(x) for x in batch_custom_ids(server)) == 150 // 37


def test_a_job_ends_with_batches_in_flight_and_a_later_run_collects(tmp_path, server):
    server.default_plan = "hold"
    outcome = tmp_path / "logs/adhoc/generate/gpt/probe.outcome.json"
    with pytest.raises(BatchesInFlight, match=r"Run the workflow again \(`make run`"):
        generate(tmp_path, model(server, batch_wait_s=0.2), outcome_path=outcome)
    report = failed_calls_report(tmp_path / "logs")  # the end of the run says so
    assert report.startswith("Batches still running at the provider")
    assert "8 requests are not answered yet" in report and next(iter(server.batches)) in report
    assert not (tmp_path / "responses-cache.jsonl").exists()
    assert (tmp_path / "cache/gpt/.batches/adhoc--probe.json").exists()
    (batch_id,) = server.batches
    server.plan_of[batch_id] = "complete"  # the provider finished it meanwhile
    rows = generate(tmp_path, model(server))
    assert len(server.batches) == 1 and all(r["error"] is None for r in rows)
    assert sorted(server.billed.values()) == [1] * 8 and server.files == {}


@pytest.mark.parametrize("own", [None, {"prompt_per_1k": 0.7, "completion_per_1k": 2.9}])
def test_the_cost_ledger_is_the_servers_usage_at_the_batch_price(tmp_path, server, own):
    price = {"prompt_per_1k": 2.5, "completion_per_1k": 10.0, "batch": own}
    server.plans = ["expire:3"]
    generate(tmp_path, model(server, price=price), n=20)
    ledger = sum(r["response"]["cost_usd"] for r in cache_rows(tmp_path))
    rate = own or {"prompt_per_1k": 1.25, "completion_per_1k": 5.0}
    assert batch_price(price) == rate
    usage = server.usage_totals()
    expected = (
        usage["input_tokens"] * rate["prompt_per_1k"]
        + usage["output_tokens"] * rate["completion_per_1k"]
    ) / 1000
    assert expected > 0 and math.isclose(ledger, expected, rel_tol=1e-3)


def test_the_spend_cap_counts_what_is_submitted_at_the_batch_price(tmp_path, server):
    # Each line: 5 prompt tokens (17 characters / 4) + 32 new tokens at $1 a token, $0.5 in a
    # batch: bounded by $18.5, so a $60 cap lets 3 lines go ($55.5) and refuses the other 5.
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
    rows = generate(tmp_path, model(server, price=price, max_cost_usd=60), max_failed_share=1)
    assert [len(x) for x in batch_custom_ids(server)] == [3]
    failed = [r for r in rows if r["error"]]
    assert len(failed) == 5 and all(r["error"].startswith("max_cost_usd reached") for r in failed)


@pytest.mark.parametrize("study,role", [("coral", "evaluate"), ("side_effects", "judges.matcher")])
def test_a_phi_study_sends_no_batch_to_a_model_that_is_not_phi_safe(study, role):
    from test_config_layers import ENV, phi_config

    from oncoeval.config import checks as oc

    config = phi_config(study, role)
    at = next(i for i, m in enumerate(config["models"]) if m["id"] == "remote")
    remote = config["models"][at] = dict(config["models"][at])  # not the shared entry
    remote.update(batch=True, price={"prompt_per_1k": 1.0, "batch": {"prompt_per_1k": 0.4}})
    problems = oc.config_problems(config, env=ENV)
    route = next(r for r in oc.model_routes(config) if r.model == "remote")
    assert [p for p in problems if "phi_safe" in p] == [
        f"studies.{study}.{role}: 'remote' ({route.role}) is not phi_safe, but studies.{study}.contains_phi is true: PHI may not be sent to "
        f"it. Set models[remote].phi_safe: true only if your data agreement allows this endpoint."
    ]
    remote["phi_safe"] = True
    # The batch keys themselves are valid (the demo's replay path is not, in a test's cwd).
    assert [p for p in oc.config_problems(config, env=ENV) if "remote" in p] == []
