"""The `openai` backend inside the workflow: keys stay out of every file; missing keys stop early."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest
from conftest import run_snakemake, write_config
from fake_openai_server import FakeOpenAIServer, answer_text
from helpers import openai_entry, write_request_set

# A variable name of our own, so that nothing in the developer's environment sets it.
KEY_ENV = "ONCOEVAL_TEST_KEY_" + secrets.token_hex(4).upper()


def write_adhoc(workdir: Path, prompts: list[str], name: str = "probe.jsonl") -> Path:
    return write_request_set(workdir / name, prompts, ids="q{i:02d}", max_new_tokens=32, meta="n")


def openai_model(mid: str, url: str, key_env: str = KEY_ENV, **extra) -> dict:
    settings = {"concurrency": 4, "timeout_s": 5, "max_retries": 2}
    return openai_entry(url, key_env, settings, id=mid, model=f"model-{mid}", **extra)


def config_for(models: list[dict], evaluate: list[str], requests: Path) -> dict:
    return {"models": models, "evaluate": evaluate, "adhoc": {"probe": str(requests.name)}}


def files_under(*roots: Path):
    for root in roots:
        if root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.slow
def test_api_key_never_reaches_any_file(workdir):
    secret = "sk-" + secrets.token_urlsafe(24)
    prompts = ["limited", "doomed"] + [f"question {i}" for i in range(6)]
    with FakeOpenAIServer(latency=0.02, api_key=secret) as server:
        server.script("limited", ["429:0.2", "500"])
        server.script("doomed", always=500)
        requests = write_adhoc(workdir, prompts)
        # One failure in 8 requests is accepted (by default any failure stops the job).
        config = config_for([openai_model("gpt", server.url)], ["gpt"], requests)
        cfg = write_config(workdir, {**config, "max_failed_share": 0.2})
        proc = run_snakemake(workdir, configfile=cfg, env={KEY_ENV: secret})
        assert server.calls["doomed"] == 3 and server.calls["limited"] == 3
        # The end of the run names the failure.
        assert "gpt / adhoc: 1 of 8 requests failed; accepted by max_failed_share" in proc.stderr

    rows = [json.loads(x) for x in (workdir / "results/adhoc/responses/gpt/probe.jsonl").open()]
    assert [r["request_id"] for r in rows] == [f"q{i:02d}" for i in range(8)]
    assert rows[0]["text"] == answer_text("limited", "model-gpt") and rows[0]["error"] is None
    assert rows[1]["text"] is None and "InternalServerError" in rows[1]["error"]
    assert all(r["error"] is None for r in rows[2:]) and rows[5]["meta"] == {"n": 5}

    scanned = 0
    roots = [workdir / d for d in ("results", "logs", ".snakemake", "cache", "benchmarks")]
    for path in files_under(*roots):
        data = path.read_bytes()
        assert secret.encode() not in data, f"the API key leaked into {path}"
        scanned += 1
    assert scanned >= 5  # responses, request copy, logs, cache, Snakemake metadata


@pytest.mark.slow
def test_missing_key_stops_before_any_job_and_names_the_variable(workdir):
    requests = write_adhoc(workdir, ["hello"])
    with FakeOpenAIServer() as server:
        cfg = write_config(
            workdir, config_for([openai_model("gpt", server.url)], ["gpt"], requests)
        )
        env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
        assert KEY_ENV not in env
        proc = run_snakemake(workdir, configfile=cfg, check=False)
        assert sum(server.calls.values()) == 0
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert KEY_ENV in output and "gpt" in output
    assert not (workdir / "results").exists()  # not even the request copy ran


@pytest.mark.slow
def test_defined_but_unused_model_needs_no_key(workdir):
    requests = write_adhoc(workdir, ["hello"])
    models = [
        openai_model("gpt", "http://127.0.0.1:9/v1"),
        openai_model("spare", "http://127.0.0.1:9/v1", key_env=KEY_ENV + "_UNSET"),
    ]
    cfg = write_config(workdir, config_for(models, ["gpt"], requests))
    proc = run_snakemake(workdir, "-n", configfile=cfg, env={KEY_ENV: "sk-present"})
    assert "generate" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_failed_calls_stop_the_run_and_a_plain_rerun_asks_only_them(workdir):
    secret = "sk-" + secrets.token_urlsafe(24)
    prompts = ["doomed"] + [f"question {i}" for i in range(5)]
    with FakeOpenAIServer(latency=0.02, api_key=secret) as server:
        server.script("doomed", always=500)
        requests = write_adhoc(workdir, prompts)
        cfg = write_config(
            workdir, config_for([openai_model("gpt", server.url)], ["gpt"], requests)
        )
        proc = run_snakemake(workdir, configfile=cfg, env={KEY_ENV: secret}, check=False)
        assert proc.returncode != 0
        assert "gpt / adhoc: 1 of 6 requests failed; stopped request sets probe" in proc.stderr
        assert "InternalServerError" in proc.stderr
        assert not (workdir / "results/adhoc/responses/gpt/probe.jsonl").exists()

        server._always.clear()  # the outage is over
        server.reset()
        proc = run_snakemake(workdir, configfile=cfg, env={KEY_ENV: secret})
        assert server.calls == {"doomed": 1}
        assert "Failed model calls" not in proc.stderr
    rows = [json.loads(x) for x in (workdir / "results/adhoc/responses/gpt/probe.jsonl").open()]
    assert all(r["error"] is None for r in rows) and len(rows) == 6


@pytest.mark.slow
def test_a_wrong_key_ends_in_a_clear_failure_not_in_tables(workdir):
    requests = write_adhoc(workdir, [f"question {i}" for i in range(6)])
    with FakeOpenAIServer(api_key="sk-" + secrets.token_urlsafe(24)) as server:
        cfg = write_config(
            workdir, config_for([openai_model("gpt", server.url)], ["gpt"], requests)
        )
        wrong = "sk-" + secrets.token_urlsafe(24)
        proc = run_snakemake(workdir, configfile=cfg, env={KEY_ENV: wrong}, check=False)
    assert proc.returncode != 0
    assert "gpt / adhoc: 6 of 6 requests failed" in proc.stderr
    assert "AuthenticationError" in proc.stderr and wrong not in proc.stdout + proc.stderr
    assert not (workdir / "results/adhoc/responses").exists() or not any(
        (workdir / "results/adhoc/responses").rglob("*.jsonl")
    )
