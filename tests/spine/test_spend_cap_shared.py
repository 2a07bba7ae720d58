"""Two jobs of one priced model running at once share its spend cap: each checks ``max_cost_usd``
against what both have paid, so together they overshoot it by at most a call in flight, not by
a whole second job's worth. The real `openai` client against tests/fake_openai_server.py,
through oncoeval.workflow.generate.run_generate, one job per thread (as two `generate` jobs in two API
slots)."""

from __future__ import annotations

import json
import secrets
import threading
from pathlib import Path

from conftest import generate_rows
from fake_openai_server import FakeOpenAIServer
from test_operational_keys import KEY_ENV, priced


def write_set(path: Path, numbers: range) -> Path:
    rows = (
        {
            "request_id": f"q{i}",
            "messages": [{"role": "user", "content": f"alpha beta {i}"}],
            "params": {"temperature": 0, "max_new_tokens": 16},
        }
        for i in numbers
    )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_two_jobs_at_once_stop_at_the_models_cap_together(tmp_path, monkeypatch):
    key = "sk-" + secrets.token_urlsafe(16)
    monkeypatch.setenv(KEY_ENV, key)
    # Each call costs $9: under a $40 cap the model may make 5 calls ($45: the fifth starts at
    # $36); each job alone would make 5 too.
    with FakeOpenAIServer(api_key=key, latency=0.05) as server:
        cfg = priced(server.url, max_cost_usd=40.0)  # $9 a call (see priced)
        rows, errors = {}, []

        def job(name: str, numbers: range) -> None:
            requests = write_set(tmp_path / f"{name}.jsonl", numbers)
            try:
                rows[name] = generate_rows(tmp_path, requests, cfg, name, max_failed_share=1)
            except Exception as exc:  # reported by the assertion below
                errors.append(exc)

        threads = [
            threading.Thread(target=job, args=("a", range(0, 8))),
            threading.Thread(target=job, args=("b", range(8, 16))),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors and not any(t.is_alive() for t in threads)
        calls = server.stats()["total_calls"]
    # 5 calls reach the cap; the other job may have one call in flight when it is reached.
    assert 5 <= calls <= 6
    answered = [r for name in "ab" for r in rows[name] if r["error"] is None]
    refused = [r for name in "ab" for r in rows[name] if r["error"]]
    assert len(answered) == calls and len(refused) == 16 - calls
    assert all(r["error"].startswith("max_cost_usd reached") for r in refused)
