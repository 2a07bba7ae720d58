"""Settings that cannot change an answer stay out of the cache key and the job signature
(issue #24, item 2): the spend cap, price, concurrency, timeouts, retries, resources.

The workflow runs the real `openai` client against tests/fake_openai_server.py.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from conftest import dry_run_jobs, run_snakemake, write_config
from fake_openai_server import FakeOpenAIServer
from helpers import openai_entry, write_request_set

from oncoeval.backends import backends
from oncoeval.config.checks import model_signature

KEY_ENV = "ONCOEVAL_TEST_OPKEYS_" + secrets.token_hex(4).upper()

# For each backend, an entry and a change of every operational key it declares (beyond the
# shared ones), none of which may change its identity.
ENTRIES = {
    "openai": {"model": "gpt-x", "base_url": "http://127.0.0.1:1/v1"},
    "hf": {"path": "/models/tiny"},
    "vllm": {"path": "/models/tiny"},
    "replay": {"path": "/answers"},
}
CHANGES = {
    "max_cost_usd": 99.0,
    "max_failed_share": 0.5,
    "phi_safe": True,
    "threads": 7,
    "resources": {"runtime": 5},
    "concurrency": 64,
    "timeout_s": 1,
    "max_retries": 0,
    "max_retry_after_s": 5,
    "price": {"prompt_per_1k": 3.0},
    "api_key_env": "OTHER_KEY",
    "batch_size": 3,
    "gpu_memory_utilization": 0.5,
    # Batch mode (issue #29): the route and the price change, never an answer.
    "batch": True,
    "batch_max_lines": 10,
    "batch_max_bytes": 1000,
    "batch_enqueued_tokens": 500,
    "batch_max_resubmits": 0,
    "batch_wait_s": 1,
    "batch_poll_s": 1,
    "batch_completion_window": "48h",
}


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_operational_keys_change_no_identity_or_signature(name):
    backend = backends()[name]
    base = {"id": "m", "backend": name, **ENTRIES[name]}
    changes = {k: v for k, v in CHANGES.items() if k in backend.operational_keys}
    assert {"max_cost_usd", "max_failed_share", "resources"} <= set(changes)
    changed = {**base, **changes}
    assert backend.identity(changed) == backend.identity(base)
    assert model_signature(changed) == model_signature(base)
    # An answer-changing setting does change it.
    assert model_signature({**base, "generation": {"top_k": 3}}) != model_signature(base)


def write_set(workdir: Path, n: int) -> Path:
    prompts = [f"alpha beta {i}" for i in range(n)]
    return write_request_set(workdir / "probe.jsonl", prompts, ids="q{i}", max_new_tokens=16)


def priced(url: str, **extra) -> dict:
    # $1 a token each way: "alpha beta N" is 3 tokens in, "[gpt-x] answer to: alpha beta N"
    # 6 tokens out, so each call costs $9.
    price = {"prompt_per_1k": 1000, "completion_per_1k": 1000}
    settings = {"concurrency": 1, "timeout_s": 5, "max_retries": 0, "price": price}
    return openai_entry(url, KEY_ENV, settings, **extra)


@pytest.mark.slow
def test_raising_the_cap_asks_only_the_unsent_and_operational_edits_rerun_nothing(workdir):
    key = "sk-" + secrets.token_urlsafe(16)
    env = {KEY_ENV: key}
    requests = write_set(workdir, 6)

    def config(**extra):
        cfg = {"models": [priced(server.url, **extra)], "evaluate": ["gpt"]}
        return write_config(workdir, {**cfg, "adhoc": {"probe": requests.name}})

    with FakeOpenAIServer(api_key=key) as server:
        # $9, $18, then $27 >= $20: three calls, and the cap leaves three unsent.
        proc = run_snakemake(workdir, configfile=config(max_cost_usd=20.0), env=env, check=False)
        assert proc.returncode != 0 and server.stats()["total_calls"] == 3
        assert "raise models[gpt].max_cost_usd" in proc.stderr
        asked_first = set(server.calls)

        server.reset()
        run_snakemake(workdir, configfile=config(max_cost_usd=100.0), env=env)
        # Exactly the three unsent requests, each once: nothing is paid for twice.
        assert server.stats()["total_calls"] == 3
        assert not asked_first & set(server.calls) and all(n == 1 for n in server.calls.values())
        rows = [json.loads(x) for x in (workdir / "results/adhoc/responses/gpt/probe.jsonl").open()]
        assert len(rows) == 6 and all(r["error"] is None for r in rows)

        # Operational edits (cap, concurrency, timeouts, retries, price) rerun no job at all.
        server.reset()
        edited = config(
            max_cost_usd=500.0,
            concurrency=16,
            timeout_s=60,
            max_retries=4,
            price={"prompt_per_1k": 0.01, "completion_per_1k": 0.03},
        )
        assert dry_run_jobs(workdir, configfile=edited, env=env) == {}
        # An answer-changing edit does rerun the model's job.
        changed = config(max_cost_usd=100.0, generation={"presence_penalty": 0.5})
        assert dry_run_jobs(workdir, configfile=changed, env=env).get("generate") == 1
        assert server.stats()["total_calls"] == 0
