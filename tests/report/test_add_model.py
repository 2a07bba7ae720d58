"""The README's "Evaluate your own model" recipe, then adding a model: a user's own config whose
model is also the Cancer-Myth verifier, run and reported as `make run` does; a second model added
and run again makes only the new model's calls and ends with a fresh report (no "params changed"
page of the judge, whose drill-down page once counted its calls on the newcomer's answers)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest
import yaml
from conftest import run_snakemake, workflow_env
from helpers import openai_entry

pytestmark = pytest.mark.slow

KEY_ENV = "ONCOEVAL_TEST_KEY_" + secrets.token_hex(4).upper()
SCOPE = ("--config", "only=cancer_myth", "limit=3")


def api_model(mid: str, url: str) -> dict:
    settings = {"timeout_s": 10, "max_retries": 1}
    return openai_entry(url, KEY_ENV, settings, id=mid, model=f"model-{mid}")


def own_config(workdir, url: str, evaluated: list[str]):
    config = {
        "models": [api_model(m, url) for m in evaluated],
        "evaluate": evaluated,
        "studies": {
            "cancer_myth": {
                "enabled": True,
                "questions": "resources/demo/cancer_myth/questions.json",
                "judges": {"verifier": evaluated[0]},
            }
        },
    }
    path = workdir / "myconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_and_report(workdir, config, key: str) -> subprocess.CompletedProcess:
    """`make run CONFIG=... ARGS=...`'s two commands: the workflow, then the report."""
    run_snakemake(workdir, *SCOPE, configfile=config, env={KEY_ENV: key})
    return subprocess.run(
        [sys.executable, "-m", "oncoeval.report.build", "--report", "results/report.html"]
        + [f"--configfile={config}", *SCOPE],
        cwd=workdir,
        env=workflow_env({KEY_ENV: key}),
        capture_output=True,
        text=True,
        timeout=600,
    )


def rows(path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def test_adding_a_model_that_a_judge_judges_keeps_the_report_fresh(workdir, key, server):
    built = run_and_report(workdir, own_config(workdir, server.url, ["mine"]), key)
    assert built.returncode == 0, built.stderr
    report = workdir / "results/report.html"
    first = report.stat().st_mtime_ns
    assert sum(server.calls.values()) > 0

    server.reset()
    built = run_and_report(workdir, own_config(workdir, server.url, ["mine", "newer"]), key)
    assert built.returncode == 0, built.stderr
    assert report.stat().st_mtime_ns > first

    # Only the newcomer's calls: its answers and the verifier's calls on them.
    responses = workdir / "results/cancer_myth/responses"
    new_files = [responses / "newer/answer.jsonl"]
    new_files += sorted((responses / "mine").glob("*--newer.jsonl"))
    assert len(new_files) >= 2
    assert sum(server.calls.values()) == sum(rows(p) for p in new_files)
    answered = {json.loads(line)["text"] for line in new_files[0].read_text().splitlines()}
    assert all(text.startswith("[model-newer]") for text in answered)
