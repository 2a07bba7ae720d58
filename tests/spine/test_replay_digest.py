"""A replay model's answers are part of its jobs' identity (issue #13, item 8).

Editing the stored answers of one request set reruns the job that reads them, and no other.
"""

from __future__ import annotations

import json

import pytest
from conftest import dry_run_jobs, run_snakemake, without_report, write_config

from oncoeval.config.checks import model_signature

SETS = ("first", "second")


def write_answers(folder, name, text):
    (folder / "adhoc").mkdir(parents=True, exist_ok=True)
    row = {"request_id": "q0", "text": text}
    (folder / "adhoc" / f"{name}.jsonl").write_text(json.dumps(row) + "\n")


def test_signature_follows_the_file_each_job_reads(tmp_path):
    cfg = {"id": "oracle", "backend": "replay", "path": str(tmp_path)}
    write_answers(tmp_path, "first", "one")
    write_answers(tmp_path, "second", "two")
    before = {s: model_signature(cfg, "adhoc", s) for s in SETS}
    assert before["first"] != before["second"]
    write_answers(tmp_path, "first", "one, corrected")
    assert model_signature(cfg, "adhoc", "first") != before["first"]
    assert model_signature(cfg, "adhoc", "second") == before["second"]
    assert "answers_digest" not in model_signature(cfg)  # without a job, the model alone


@pytest.mark.slow
def test_editing_replay_answers_reruns_only_the_jobs_that_read_them(workdir):
    replay = workdir / "replay"
    for name in SETS:
        write_answers(replay, name, f"old answer for {name}")
        row = {"request_id": "q0", "messages": [{"role": "user", "content": name}]}
        (workdir / f"{name}.jsonl").write_text(json.dumps(row) + "\n")
    config = {
        "models": [{"id": "oracle", "backend": "replay", "path": str(replay)}],
        "evaluate": ["oracle"],
        "adhoc": {name: f"{name}.jsonl" for name in SETS},
    }
    cfg = write_config(workdir, config)
    run_snakemake(workdir, configfile=cfg)
    assert dry_run_jobs(workdir, configfile=cfg) == {}

    write_answers(replay, "first", "corrected answer")
    assert without_report(dry_run_jobs(workdir, configfile=cfg)) == {"generate": 1, "all": 1}
    run_snakemake(workdir, configfile=cfg)
    texts = {
        name: json.loads((workdir / f"results/adhoc/responses/oracle/{name}.jsonl").read_text())[
            "text"
        ]
        for name in SETS
    }
    assert texts == {"first": "corrected answer", "second": "old answer for second"}
