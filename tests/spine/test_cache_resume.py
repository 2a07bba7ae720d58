"""Item-level cache: a `generate` job killed halfway resumes without asking anything twice."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import link_workflow, run_snakemake, workflow_env, write_config
from fake_openai_server import FakeOpenAIServer
from helpers import openai_entry, write_request_set

KEY_ENV = "ONCOEVAL_TEST_KEY_" + secrets.token_hex(4).upper()
N = 20
PROMPTS = [f"summarise note {i}" for i in range(N)]
RESPONSES = Path("results/adhoc/responses/gpt/notes.jsonl")


def setup_run(workdir: Path, url: str) -> Path:
    write_request_set(
        workdir / "notes.jsonl", PROMPTS, ids="n{i:02d}", max_new_tokens=16, meta="note"
    )
    model = openai_entry(url, KEY_ENV, concurrency=2, timeout_s=10)
    config = {"models": [model], "evaluate": ["gpt"], "adhoc": {"notes": "notes.jsonl"}}
    return write_config(workdir, config)


def read_rows(workdir: Path) -> list[dict]:
    return [json.loads(line) for line in (workdir / RESPONSES).open()]


def comparable(rows: list[dict]) -> list[dict]:
    """Rows without what legitimately differs between runs (timing, cache flag)."""
    return [{k: v for k, v in r.items() if k not in ("latency_s", "cached")} for r in rows]


def cached_request_ids(workdir: Path) -> set[str]:
    ids = set()
    for file in (workdir / "cache/responses/gpt").glob("*.jsonl"):
        for line in file.open():
            try:
                ids.add(json.loads(line)["response"]["request_id"])
            except (json.JSONDecodeError, KeyError):
                pass  # a line torn by the kill
    return ids


def run_and_kill_halfway(workdir: Path, config: Path, server: FakeOpenAIServer, env: dict):
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", "none", "--cores", "2"]
    proc = subprocess.Popen(
        cmd + ["--configfile", str(config)],
        cwd=workdir,
        env=workflow_env(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: snakemake and the job it started
    )
    deadline = time.monotonic() + 120
    while server.stats()["total_answered"] < N // 2:
        assert proc.poll() is None, "snakemake finished before it could be killed"
        assert time.monotonic() < deadline, "the server never answered half the requests"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    calls = server.stats()["total_calls"]
    time.sleep(0.5)
    assert server.stats()["total_calls"] == calls, "the generate job survived the kill"


@pytest.mark.slow
def test_killed_generate_job_resumes_without_repeating_answered_requests(workdir, tmp_path):
    env = {KEY_ENV: "sk-" + secrets.token_hex(12)}
    with FakeOpenAIServer(latency=0.25, api_key=env[KEY_ENV]) as server:
        reference = link_workflow(tmp_path / "reference")
        run_snakemake(reference, configfile=setup_run(reference, server.url), env=env)
        expected = read_rows(reference)
        assert all(r["error"] is None for r in expected) and len(expected) == N

        server.reset()
        config = setup_run(workdir, server.url)
        run_and_kill_halfway(workdir, config, server, env)
        first = server.stats()
        assert not (workdir / RESPONSES).exists()
        done = cached_request_ids(workdir)
        assert 0 < len(done) < N

        server.reset()
        run_snakemake(workdir, "--unlock", configfile=config, env=env)
        run_snakemake(workdir, configfile=config, env=env)
        second = server.stats()
        rows = read_rows(workdir)
        assert comparable(rows) == comparable(expected)
        by_prompt = dict(zip([f"n{i:02d}" for i in range(N)], PROMPTS, strict=True))
        # The rerun asked exactly what the killed job had not finished, each once...
        assert second["calls"] == {by_prompt[rid]: 1 for rid in by_prompt if rid not in done}
        # ...and nothing answered before the kill was answered again.
        for rid in done:
            assert first["answered"].get(by_prompt[rid]) == 1
            assert by_prompt[rid] not in second["calls"]
        assert {r["request_id"] for r in rows if r["cached"]} == done

        server.reset()
        (workdir / RESPONSES).unlink()
        run_snakemake(workdir, configfile=config, env=env)
        assert server.stats()["total_calls"] == 0
        third = read_rows(workdir)
        assert all(r["cached"] for r in third)
        assert comparable(third) == comparable(expected)
