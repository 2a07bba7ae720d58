"""`make estimate` on a real workflow: the stages that call no model run, no model is called, and
the printed estimate counts the requests the run would send."""

from __future__ import annotations

import math
import subprocess
import sys

import pandas as pd
import pytest
from conftest import link_workflow, run_snakemake, workflow_env, write_config
from helpers import MAKE, replayed, run_make

from oncoeval.core.io import read_jsonl

KEY_ENV = "ONCOEVAL_TEST_ESTIMATE_KEY"
CONFIG = {
    "models": [
        {
            "id": "gpt-priced",
            "backend": "openai",
            "model": "gpt-x",
            "base_url": "http://127.0.0.1:9/v1",  # nothing listens: a call would fail loudly
            "api_key_env": KEY_ENV,
            "max_new_tokens": 100,
            "price": {"prompt_per_1k": 1.0, "completion_per_1k": 4.0},
        }
    ],
    "evaluate": ["gpt-priced"],
    "studies": {
        # The study's own list: the demo's names its reference replay beside SmolLM2.
        "side_effects": {
            "enabled": True,
            "evaluate": ["gpt-priced"],
            "matcher": {"method": "lexical"},
        },
        "cancer_myth": {"enabled": False},
        "coral": {"enabled": False},
        "guidelines": {"enabled": False},
    },
}


def test_estimate_runs_no_model_and_counts_what_the_run_would_send(tmp_path):
    workdir = link_workflow(tmp_path / "run")
    config = write_config(workdir, CONFIG)
    proc = subprocess.run(
        [
            sys.executable, "-m", "oncoeval.report.estimate", "--workflow-profile", "none",
            "--cores", "2", f"--configfile={config}",
        ],
        cwd=workdir, env=workflow_env(), capture_output=True, text=True,  # no key: no call
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (workdir / "results" / "side_effects" / "responses").exists()  # no call made
    requests = read_jsonl(workdir / "results" / "side_effects" / "requests" / "lists.jsonl")
    assert len(requests) == 48  # 6 profiles x 2 variants x 4 regimes
    texts = [[m["content"] for m in r["messages"]] for r in requests]
    words = sum(len(t.split()) for ts in texts for t in ts)
    most = sum(len(t.encode()) + 4 for ts in texts for t in ts) + 3 * len(texts)
    estimate = pd.read_csv(workdir / "results" / "estimate" / "estimate.tsv", sep="\t")
    row, model_total, total = estimate.to_dict("records")
    # One model in one study: its total and the overall total repeat its counts.
    assert (model_total["study"], total["model"], total["study"]) == ("all", "all", "all")
    assert model_total["requests_max"] == total["requests_max"] == 48
    # The study asks 160 new tokens; the model's cap of 100 applies.
    assert (row["model"], row["study"], row["requests_min"], row["requests_max"]) == (
        "gpt-priced", "side_effects", 48, 48,
    )  # fmt: skip
    assert (row["prompt_tokens_min"], row["prompt_tokens_max"]) == (words, most)
    assert row["max_new_tokens"] == 48 * 100
    assert math.isclose(row["cost_min_usd"], words / 1000 * 1.0, rel_tol=1e-5)
    assert math.isclose(row["cost_max_usd"], most / 1000 + 4800 / 1000 * 4.0, rel_tol=1e-5)
    assert f"{48 * 100}" in proc.stdout and "gpt-priced" in proc.stdout


# Cancer-Myth answered and judged by stored answers and verdicts (no model is called).
STORED = replayed("cancer_myth")


def test_estimate_after_an_earlier_run_counts_the_judge_sets_the_run_will_build(tmp_path):
    """An earlier run of 5 questions (limit=5) left a verifier request set of 5; the run of all
    21 rebuilds it from 21 answers: the estimate counts 21, not the earlier file's 5."""
    workdir = link_workflow(tmp_path / "run")
    config = write_config(workdir, STORED)
    run_snakemake(workdir, "--config", "limit=5", configfile=config)
    verify = "verify--cancer-myth-reference-replay"
    older = read_jsonl(workdir / "results" / "cancer_myth" / "requests" / f"{verify}.jsonl")
    assert len(older) == 5
    proc = subprocess.run(
        [
            sys.executable, "-m", "oncoeval.report.estimate", "--workflow-profile", "none",
            "--cores", "2", f"--configfile={config}",
        ],
        cwd=workdir, env=workflow_env(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = pd.read_csv(workdir / "results" / "estimate" / "estimate.tsv", sep="\t")
    by = rows.set_index(["model", "study"])
    assert by.loc[("cancer-myth-reference-replay", "cancer_myth"), "requests_max"] == 21
    judge = by.loc[("cancer-myth-reference-verdicts", "cancer_myth")]
    # 21 verdicts, and at most one retry per verdict (at least none: a retry is optional).
    assert (judge["requests_min"], judge["requests_max"]) == (21, 42)
    assert f"{verify} (estimated from answers)" in judge["pending_request_sets"]
    assert by.loc[("all", "all"), "requests_max"] == 63
    assert "estimated from answers" in proc.stdout


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_make_estimate_takes_the_runs_args_as_make_run_does(tmp_path):
    """`make estimate ARGS="--config only=side_effects"` estimates only that study, as `make
    run ARGS=...` would run it (the config enables Cancer-Myth too)."""
    workdir = link_workflow(tmp_path / "run")
    both = {**CONFIG, "studies": {**CONFIG["studies"], **STORED["studies"]}}
    both["studies"]["side_effects"] = CONFIG["studies"]["side_effects"]
    config = write_config(workdir, both)
    args = ("estimate", f"CONFIG={config}", "ARGS=--config only=side_effects")
    proc = run_make(workdir, *args, env={KEY_ENV: "sk-not-used"}, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:]
    rows = pd.read_csv(workdir / "results" / "estimate" / "estimate.tsv", sep="\t")
    assert set(rows["study"]) == {"side_effects", "all"}
    assert set(rows["model"]) == {"gpt-priced", "all"}
    assert not (workdir / "results" / "cancer_myth").exists()  # its stages did not run
    assert rows.set_index(["model", "study"]).loc[("all", "all"), "requests_max"] == 48


def _estimate(workdir, config, env=None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "oncoeval.report.estimate", "--workflow-profile", "none",
         "--cores", "2", f"--configfile={config}", "--config", "limit=3"],
        cwd=workdir, env=workflow_env(env), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_a_priced_run_lies_inside_the_estimate_and_a_cached_rerun_is_subtracted(tmp_path):
    """A user's own config (an API model that answers and is its own Cancer-Myth verifier) on a
    priced fake server: the estimate, made without the key, bounds the run's calls, tokens and
    cost; a second run directory sharing the response cache estimates the answers as cached."""
    from fake_openai_server import FakeOpenAIServer

    key_env = "ONCOEVAL_TEST_ESTIMATE_BOUND_KEY"
    cache = tmp_path / "cache"
    with FakeOpenAIServer(api_key="sk-bound") as server:
        model = {
            "id": "gpt-priced", "backend": "openai", "model": "gpt-x", "base_url": server.url,
            "api_key_env": key_env, "price": {"prompt_per_1k": 1.0, "completion_per_1k": 4.0},
        }  # fmt: skip
        own = {
            "models": [model],
            "evaluate": ["gpt-priced"],
            "cache_dir": str(cache),
            "studies": {
                "cancer_myth": {
                    "enabled": True,
                    "questions": "resources/demo/cancer_myth/questions.json",
                    "judges": {"verifier": "gpt-priced"},
                }
            },
        }
        workdir = link_workflow(tmp_path / "run")
        config = write_config(workdir, own, demo=False)
        proc = _estimate(workdir, config)  # no key in the environment
        assert max(len(line) for line in proc.stdout.splitlines()) <= 100, proc.stdout
        assert sum(server.calls.values()) == 0
        est = pd.read_csv(workdir / "results/estimate/estimate.tsv", sep="\t")
        bound = est.set_index(["model", "study"]).loc[("all", "all")]

        run_snakemake(workdir, "--config", "limit=3", configfile=config, env={key_env: "sk-bound"})
        calls = sum(server.calls.values())
    usage = pd.read_csv(workdir / "results/usage.tsv", sep="\t")
    assert usage["requests"].sum() == calls > 0
    assert bound["requests_min"] <= calls <= bound["requests_max"]
    prompt, completion = usage["prompt_tokens"].sum(), usage["completion_tokens"].sum()
    assert bound["prompt_tokens_min"] <= prompt <= bound["prompt_tokens_max"]
    assert 0 < completion <= bound["max_new_tokens"]
    cost = usage["cost_usd"].sum()
    assert bound["cost_min_usd"] <= cost <= bound["cost_max_usd"]
    # The verifier's requests (3, and at most 3 retries) count the verifier's token limit.
    judge = est.set_index(["model", "study"]).loc[("gpt-priced", "cancer_myth")]
    answer_limit = new_token_limit(workdir, "answer")
    verify_limit = new_token_limit(workdir, "verify--gpt-priced")
    assert judge["max_new_tokens"] == 3 * answer_limit + 6 * verify_limit

    # Another run directory on the same cache: the 3 answers are cached, not to be called.
    second = link_workflow(tmp_path / "second")
    _estimate(second, write_config(second, own, demo=False))
    again = pd.read_csv(second / "results/estimate/estimate.tsv", sep="\t")
    row = again.set_index(["model", "study"]).loc[("gpt-priced", "cancer_myth")]
    assert row["cached"] == 3 and row["requests_min"] == 0


def new_token_limit(workdir, requestset: str) -> int:
    """The new tokens each request of a set of the run asked for."""
    rows = read_jsonl(workdir / f"results/cancer_myth/requests/{requestset}.jsonl")
    return int(rows[0]["params"]["max_new_tokens"])
