"""Two batch-mode jobs of one model that share requests submit each shared request once: the
real `openai` client against tests/fake_batch_server.py, through oncoeval.workflow.generate.run_generate.

Job ``a`` asks questions 0-7 and job ``b`` questions 4-11 of the same model: questions 4-7 have
one cache key in both jobs."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import generate_rows
from fake_batch_server import FakeBatchServer
from test_batch_api import (
    KEY_ENV,  # noqa: F401 (the shared `key` fixture sets it)
    cache_rows,
    model,
    prompts,
    write_requests,
)

from oncoeval.backends.batch import BatchesInFlight

QUESTIONS = {"a": prompts(12)[:8], "b": prompts(12)[4:]}
SHARED = set(QUESTIONS["a"]) & set(QUESTIONS["b"])


@pytest.fixture
def server(key):
    with FakeBatchServer(api_key=key) as srv:
        yield srv


def generate(tmp_path: Path, job: str, cfg: dict) -> list[dict]:
    """Run job ``job`` (request set ``probe-{job}``) of the model into the shared cache."""
    requests = write_requests(tmp_path / f"requests-{job}.jsonl", QUESTIONS[job])
    return generate_rows(tmp_path, requests, cfg, f"probe-{job}")


def submitted(server) -> Counter:
    """How many submitted batch lines asked each question."""
    return Counter(
        line["body"]["messages"][-1]["content"]
        for lines in server.lines_of.values()
        for line in lines
    )


def wait_for(condition, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_two_jobs_running_at_once_submit_each_shared_request_once(tmp_path, server):
    server.default_plan = "hold"  # no batch ends before both jobs have submitted
    cfg = model(server)
    rows, errors = {}, []

    def job(name: str) -> None:
        try:
            rows[name] = generate(tmp_path, name, cfg)
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=job, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    # Each job has submitted what it asks and no other job holds; then they only poll.
    wait_for(lambda: sum(map(len, list(server.lines_of.values()))) >= 12)
    server.default_plan = "complete"
    for batch_id in list(server.plan_of):
        server.plan_of[batch_id] = "complete"
    for thread in threads:
        thread.join(20)
    assert not errors and not any(t.is_alive() for t in threads)
    assert submitted(server) == Counter(prompts(12))  # every question in one batch line
    assert sorted(server.billed.values()) == [1] * 12
    for name in "ab":
        assert [r["text"] is not None and r["error"] is None for r in rows[name]] == [True] * 8
    assert len(cache_rows(tmp_path)) == 12
    assert list((tmp_path / "cache/gpt/.batches").glob("*.json")) == []


def test_a_job_waits_for_another_jobs_batch_and_a_rerun_takes_its_answers(tmp_path, server):
    server.plans = ["hold", "complete"]  # a's batch runs on; b's own questions are answered
    with pytest.raises(BatchesInFlight):
        generate(tmp_path, "a", model(server, batch_wait_s=0.1))
    (held,) = server.batches
    manifest = tmp_path / "cache/gpt/.batches/adhoc--probe-a.json"
    with pytest.raises(BatchesInFlight) as ended:
        generate(tmp_path, "b", model(server, batch_wait_s=0.3))
    message = str(ended.value)
    assert "4 requests are not answered yet" in message
    assert (
        f"4 of them are in a batch of another job of this model, adhoc--probe-a (manifest {manifest})"
        in message
    )
    # b submitted only its own questions; the shared ones stay in a's batch.
    assert submitted(server) == Counter(QUESTIONS["a"] + prompts(12)[8:])

    server.plan_of[held] = "complete"  # the provider finished a's batch meanwhile
    rows_a = generate(tmp_path, "a", model(server))
    batches = len(server.batches)
    rows_b = generate(tmp_path, "b", model(server))
    assert len(server.batches) == batches == 2  # the rerun of b submits nothing
    assert submitted(server) == Counter(prompts(12))
    assert sorted(server.billed.values()) == [1] * 12
    assert all(r["error"] is None for r in rows_a + rows_b)
    assert all(r["cached"] for r in rows_b)


def test_an_unreadable_manifest_of_another_job_is_logged_not_a_crash(tmp_path, server, caplog):
    garbage = tmp_path / "cache/gpt/.batches/adhoc--other.json"
    garbage.parent.mkdir(parents=True)
    garbage.write_text('{"parts": [{"state": "open", "keys": [')  # torn
    with caplog.at_level(logging.WARNING, logger="oncoeval.backends.batch"):
        rows = generate(tmp_path, "a", model(server))
    assert all(r["error"] is None for r in rows)
    assert submitted(server) == Counter(QUESTIONS["a"])
    assert any(
        "unreadable batch manifest" in r.getMessage() and str(garbage) in r.getMessage()
        for r in caplog.records
    )


def test_another_jobs_running_batch_counts_against_the_spend_cap(tmp_path, server):
    # Each line is bounded by $18.5 at the batch price (see test_batch_api's cap test). Job c's
    # two lines ($37) run on at the provider; job d asks two other questions under the same
    # $60 cap: $37 + $18.5 fits, a second $18.5 does not, so d submits one line and refuses one.
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
    server.plans = ["hold", "complete"]
    questions = prompts(4)

    def run(job: str, texts: list[str], **extra) -> list[dict]:
        requests = write_requests(tmp_path / f"requests-{job}.jsonl", texts)
        cfg = model(server, price=price, max_cost_usd=60, **extra)
        return generate_rows(tmp_path, requests, cfg, job, max_failed_share=1)

    with pytest.raises(BatchesInFlight):
        run("c", questions[:2], batch_wait_s=0.1)
    rows = run("d", questions[2:])
    assert submitted(server) == Counter(questions[:3])  # d's second question never went
    answered, refused = rows
    assert answered["error"] is None
    assert refused["error"].startswith("max_cost_usd reached: $55.5000 spent or submitted")
