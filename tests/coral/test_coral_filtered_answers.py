"""A reply the provider filtered is a failed call on CORAL: unscored and counted, never scored as
an empty answer (issue #24, item 1). The real `openai` client against
tests/fake_openai_server.py, through the workflow."""

from __future__ import annotations

import json
import secrets

import pandas as pd
import pytest
from fake_openai_server import REFUSAL, FakeOpenAIServer
from helpers import openai_entry

from tests.conftest import REPO, other_studies_off, run_snakemake, write_config

DEMO = REPO / "resources" / "demo" / "coral"
KEY_ENV = "ONCOEVAL_TEST_CORAL_KEY_" + secrets.token_hex(4).upper()


def config(url: str) -> dict:
    model = openai_entry(url, KEY_ENV, concurrency=4, timeout_s=10, max_retries=0)
    return {
        "models": [model],
        "evaluate": ["gpt"],
        # The filtered answers are accepted as failures, so that the tables are built.
        "max_failed_share": 0.5,
        "studies": {
            **other_studies_off("coral"),
            "coral": {
                "enabled": True,
                "contains_phi": False,
                "evaluate": ["gpt"],
                "notes_dir": str(DEMO / "notes"),
                "metadata": str(DEMO / "metadata.tsv"),
                "subtypes": ["future_meds"],
                "max_new_tokens": 64,
                "review": {"sheet": None},
            },
        },
        "bootstrap": {"n_resamples": 100, "ci": 0.95, "seed": 0},
    }


@pytest.mark.slow
def test_filtered_replies_are_unscored_and_counted_on_coral(workdir):
    key = "sk-" + secrets.token_urlsafe(16)
    env = {KEY_ENV: key}
    with FakeOpenAIServer(api_key=key) as server:
        cfg = write_config(workdir, config(server.url))
        run_snakemake(workdir, "results/coral/requests/extraction.jsonl", configfile=cfg, env=env)
        requests = [
            json.loads(x) for x in (workdir / "results/coral/requests/extraction.jsonl").open()
        ]
        assert len(requests) == 4 * 2
        filtered, null, refused = requests[0], requests[1], requests[2]
        server.script(filtered["messages"][-1]["content"], ["filter"])
        server.script(null["messages"][-1]["content"], ["null"])
        server.script(refused["messages"][-1]["content"], ["refuse"])
        run_snakemake(workdir, configfile=cfg, env=env)

        calls = pd.read_csv(workdir / "results/coral/tables/model_calls.tsv", sep="\t")
        row = calls[calls["model"] == "gpt"].iloc[0]
        assert (row["n_requests"], row["n_failed"], row["n_refused"]) == (8, 2, 1)

        scores = pd.read_csv(workdir / "results/coral/scores/gpt.tsv", sep="\t")
        key_cols = ["doc_id", "section", "subtype"]
        for req, unscored in ((filtered, True), (null, True), (refused, False)):
            m = req["meta"]
            mine = scores[(scores[key_cols] == [m[k] for k in key_cols]).all(axis=1)]
            assert len(mine) and mine["unscored"].eq(unscored).all(), m
            if unscored:
                assert mine["em_f1"].isna().all() and mine["bleu4"].isna().all()
        # Only the two failed calls' units are unscored.
        unscored = {tuple(r) for r in scores.loc[scores["unscored"], key_cols].to_numpy()}
        assert unscored == {tuple(r["meta"][k] for k in key_cols) for r in (filtered, null)}
        overall = pd.read_csv(workdir / "results/coral/tables/overall.tsv", sep="\t")
        assert (overall["n_unscored"] > 0).all()

        # The accepted failures are not in the cache: rerunning the generate job asks exactly
        # the two failed calls again (the scripted steps are used up: now they answer).
        server.reset()
        run_snakemake(
            workdir, "-f", "results/coral/responses/gpt/extraction.jsonl", configfile=cfg, env=env
        )
        assert server.stats()["total_calls"] == 2
        responses = [
            json.loads(x) for x in (workdir / "results/coral/responses/gpt/extraction.jsonl").open()
        ]
        by_id = {r["request_id"]: r for r in responses}
        assert by_id[refused["request_id"]]["text"] == REFUSAL
        assert all(r["error"] is None for r in responses)
