"""CORAL end to end in batch mode (issue #29): the run ends while its batch is running, a plain
rerun collects it, and the scores are those of the synchronous run on the same answers. The real
`openai` client against tests/fake_batch_server.py, through the workflow."""

from __future__ import annotations

import json
import secrets

import pandas as pd
import pytest
from fake_batch_server import FakeBatchServer
from test_coral_filtered_answers import KEY_ENV, config

from tests.conftest import link_workflow, run_snakemake, write_config


@pytest.mark.slow
def test_coral_in_batch_mode_scores_as_the_synchronous_run(tmp_path):
    key = "sk-" + secrets.token_urlsafe(16)
    env = {KEY_ENV: key}
    with FakeBatchServer(api_key=key) as server:
        sync = link_workflow(tmp_path / "sync")
        run_snakemake(sync, configfile=write_config(sync, config(server.url)), env=env)
        assert server.stats()["total_calls"] == 8 and not server.batches

        batched = link_workflow(tmp_path / "batch")
        cfg = config(server.url)
        cfg["models"][0].update(batch=True, batch_wait_s=1, batch_poll_s=0.05)
        cfg = write_config(batched, cfg)
        server.default_plan = "hold"  # the provider takes longer than the job waits
        proc = run_snakemake(batched, configfile=cfg, env=env, check=False)
        assert proc.returncode != 0
        assert "batches still running at the provider" in proc.stderr
        assert "Run the workflow again (`make run`" in proc.stderr
        assert not (batched / "results/coral/scores/gpt.tsv").exists()

        (batch_id,) = server.batches
        server.plan_of[batch_id] = "complete"
        run_snakemake(batched, configfile=cfg, env=env)  # a plain rerun collects
        assert list(server.batches) == [batch_id] and server.stats()["total_calls"] == 8
        assert sorted(server.billed.values()) == [1] * 8 and server.files == {}

    responses = "results/coral/responses/gpt/extraction.jsonl"
    fields = ("request_id", "text", "prompt_tokens", "completion_tokens")
    rows = {
        run: [[json.loads(x)[f] for f in fields] for x in (run / responses).open()]
        for run in (sync, batched)
    }
    assert rows[sync] == rows[batched]
    scores = {run: pd.read_csv(run / "results/coral/scores/gpt.tsv", sep="\t") for run in rows}
    assert len(scores[sync]) > 0
    pd.testing.assert_frame_equal(scores[sync], scores[batched])
