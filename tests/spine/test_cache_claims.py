"""Two runs sharing a cache never pay twice (issue #13, item 5).

Concurrent Snakemake runs on one `cache_dir` against a call-counting server ask each request
once; a claimant killed mid-call costs at most one more call per request; claims from another
host are waited for while their heartbeat moves and taken over once it stops.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import link_workflow, run_snakemake, workflow_env, write_config
from fake_openai_server import FakeOpenAIServer, answer_text
from helpers import openai_entry, write_request_set

from oncoeval.backends.openai_api import Backend
from oncoeval.core.records import Request, Response, read_requests, read_responses
from oncoeval.models.cache import RequestClaims, ResponseCache, cache_key
from oncoeval.workflow.generate import effective_params, run_generate

KEY_ENV = "ONCOEVAL_TEST_KEY_" + secrets.token_hex(4).upper()
N = 12
PROMPTS = [f"summarise note {i}" for i in range(N)]
RESPONSES = Path("results/adhoc/responses/gpt/notes.jsonl")


def model(url: str, **extra) -> dict:
    # Answers may be held back while the other run starts: a long timeout.
    return openai_entry(url, KEY_ENV, {"concurrency": 3, "timeout_s": 300}, **extra)


def write_notes(path: Path) -> Path:
    return write_request_set(path, PROMPTS, ids="n{i:02d}", max_new_tokens=16)


def setup_run(workdir: Path, url: str, cache_dir: Path) -> Path:
    write_notes(workdir / "notes.jsonl")
    config = {
        "models": [model(url)],
        "evaluate": ["gpt"],
        "adhoc": {"notes": "notes.jsonl"},
        "cache_dir": str(cache_dir),
    }
    return write_config(workdir, config)


def start(workdir: Path, config: Path, env: dict) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2"]
    return subprocess.Popen(
        [*cmd, f"--configfile={config}"],
        cwd=workdir,
        env=workflow_env(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: snakemake and its job
    )


def read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def wait_for(condition, proc: subprocess.Popen, what: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, f"snakemake ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.slow
def test_two_concurrent_runs_on_one_cache_ask_each_request_once(tmp_path):
    env = {KEY_ENV: "sk-" + secrets.token_hex(12)}
    cache_dir = tmp_path / "shared-cache"
    first, second = link_workflow(tmp_path / "a"), link_workflow(tmp_path / "b")
    logs = [d / "logs/adhoc/generate/gpt/notes.log" for d in (first, second)]
    with FakeOpenAIServer(latency=0.2, api_key=env[KEY_ENV]) as server:
        server.gate.clear()  # no answer before both generate jobs have started
        procs = [start(d, setup_run(d, server.url, cache_dir), env) for d in (first, second)]
        for proc, log in zip(procs, logs, strict=True):
            wait_for(lambda log=log: "to generate" in read(log), proc, f"{log} started")
        server.gate.set()
        assert [proc.wait(timeout=300) for proc in procs] == [0, 0]
        assert server.stats()["calls"] == {p: 1 for p in PROMPTS}
    rows_a = read_responses(first / RESPONSES)
    rows_b = read_responses(second / RESPONSES)
    assert [r.text for r in rows_a] == [r.text for r in rows_b]
    assert [r.text for r in rows_b] == [answer_text(p, "gpt-x") for p in PROMPTS]
    # One job waited for answers the other was fetching (none was in the cache at its start).
    assert any("another job is asking" in read(log) for log in logs)
    assert all("0 from cache" in read(log) for log in logs)
    assert not list((cache_dir / "gpt" / ".claims").iterdir())  # every claim released


@pytest.mark.slow
def test_a_claimant_killed_mid_call_costs_at_most_one_more_call(tmp_path):
    env = {KEY_ENV: "sk-" + secrets.token_hex(12)}
    cache_dir = tmp_path / "shared-cache"
    first, second = link_workflow(tmp_path / "a"), link_workflow(tmp_path / "b")
    with FakeOpenAIServer(latency=0.6, api_key=env[KEY_ENV]) as server:
        proc_a = start(first, setup_run(first, server.url, cache_dir), env)
        # Kill A once it has answers and calls in flight.
        wait_for(lambda: len(cached_prompts(cache_dir)) >= 3, proc_a, "A cached some answers")
        os.killpg(proc_a.pid, signal.SIGKILL)
        proc_a.wait()
        killed = server.stats()
        assert killed["total_answered"] < N
        assert list((cache_dir / "gpt" / ".claims").iterdir())  # A died holding claims
        cached = cached_prompts(cache_dir)
        assert 3 <= len(cached) < N

        run_snakemake(second, configfile=setup_run(second, server.url, cache_dir), env=env)
        calls = server.stats()["calls"]
    assert set(calls) == set(PROMPTS) and max(calls.values()) <= 2
    assert [r.text for r in read_responses(second / RESPONSES)] == [
        answer_text(p, "gpt-x") for p in PROMPTS
    ]
    # Answers A had cached before the kill were not asked again.
    assert all(calls[p] == 1 for p in cached)


def cached_prompts(cache_dir: Path) -> set[str]:
    by_id = {f"n{i:02d}": p for i, p in enumerate(PROMPTS)}
    found = set()
    for file in (cache_dir / "gpt").glob("*.jsonl"):
        for line in file.open():
            try:
                found.add(by_id[json.loads(line)["response"]["request_id"]])
            except (json.JSONDecodeError, KeyError):
                pass  # a line torn by the kill
    return found


# -- claims from another host, in-process -------------------------------------------------------


def foreign_claim(claims_dir: Path, key: str) -> Path:
    path = claims_dir / ".claims" / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"host": "node-elsewhere", "pid": 1, "started": time.time()}))
    return path


def keys_of(requests_path: Path, cfg: dict) -> list[str]:
    identity = Backend.identity(cfg)
    out = []
    for r in read_requests(requests_path):
        params = effective_params(r, cfg)
        out.append(cache_key("openai", identity, Request(r.request_id, r.messages, params), params))
    return out


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-" + secrets.token_hex(12))
    with FakeOpenAIServer(latency=0.01, api_key=os.environ[KEY_ENV]) as srv:
        yield srv


def test_a_claim_whose_heartbeat_stopped_is_taken_over_after_the_stale_time(tmp_path, server):
    requests = write_notes(tmp_path / "notes.jsonl")
    cfg = model(server.url)
    keys = keys_of(requests, cfg)
    claim = foreign_claim(tmp_path / "cache" / "gpt", keys[0])
    started = time.monotonic()
    run_generate(
        requests, tmp_path / "out.jsonl", cfg, tmp_path / "cache", "adhoc", "notes",
        progress=False, claim_stale_s=1.0,
    )  # fmt: skip
    assert time.monotonic() - started >= 1.0  # waited for the stale time, then took over
    assert server.stats()["calls"] == {p: 1 for p in PROMPTS}
    assert not claim.exists()
    assert all(r.error is None for r in read_responses(tmp_path / "out.jsonl"))


def test_a_live_claim_elsewhere_is_waited_for_and_its_answer_used(tmp_path, server):
    requests = write_notes(tmp_path / "notes.jsonl")
    cfg = model(server.url)
    keys = keys_of(requests, cfg)
    folder = tmp_path / "cache" / "gpt"
    claim = foreign_claim(folder, keys[0])
    done = threading.Event()

    def other_job():  # beats for 1.5 s (past the stale time), then answers and releases
        for _ in range(15):
            os.utime(claim)
            time.sleep(0.1)
        other = ResponseCache(tmp_path / "cache", "gpt", "elsewhere")
        other.append(keys[0], Response("n00", "gpt", "answer from the other node"))
        other.close()
        claim.unlink()
        done.set()

    thread = threading.Thread(target=other_job)
    thread.start()
    run_generate(
        requests, tmp_path / "out.jsonl", cfg, tmp_path / "cache", "adhoc", "notes",
        progress=False, claim_stale_s=1.0,
    )  # fmt: skip
    thread.join()
    assert done.is_set()
    rows = read_responses(tmp_path / "out.jsonl")
    assert rows[0].text == "answer from the other node" and rows[0].cached
    assert PROMPTS[0] not in server.stats()["calls"]
    assert server.stats()["calls"] == {p: 1 for p in PROMPTS[1:]}


def test_claims_record_host_and_pid_and_are_released(tmp_path):
    claims = RequestClaims(tmp_path, stale_after_s=60)
    try:
        assert claims.acquire("k1") and not claims.acquire("k1")
        holder = json.loads((tmp_path / ".claims" / "k1.json").read_text())
        assert holder["host"] == socket.gethostname() and holder["pid"] == os.getpid()
        claims.release("k1")
        assert not (tmp_path / ".claims" / "k1.json").exists()
        assert claims.acquire("k2")
    finally:
        claims.close()
    assert not list((tmp_path / ".claims").iterdir())
