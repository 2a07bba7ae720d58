"""Failed calls and truncated answers are counted per study and model (issue #13, items 2, 9)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from oncoeval.backends.base import no_text_failure
from oncoeval.core.records import Response, write_responses
from oncoeval.workflow.calls import calls_table
from tests.cancer_myth.test_workflow import (
    _evaluation_config,
    _evaluation_inputs,
    _jsonl,
    _only_cancer_myth,
    _verdict,
)
from tests.conftest import run_snakemake, write_config


def test_calls_table_counts_failed_truncated_filtered_cached_and_other_model_rows(tmp_path):
    root = tmp_path / "responses"
    rows = [
        Response("a", "m", "whole", finish_reason="stop", cached=True, other_model=True),
        Response("b", "m", "cut o", finish_reason="length"),
        Response("c", "m", None, error="APIError: 500"),
        Response("d", "m", "I can't help with that.", finish_reason="stop", refused=True),
        Response("e", "m", None, "content_filter", error=no_text_failure("", "content_filter")[1]),
    ]
    write_responses(root / "m" / "answer.jsonl", rows)
    write_responses(root / "j" / "verify--m.jsonl", rows[:1])
    write_responses(root / "unused" / "answer.jsonl", rows)  # a model the study no longer uses
    table = calls_table(root, ["m", "j"], tmp_path / "calls.tsv", tmp_path / "calls.md")
    assert table.to_dict("records") == [
        {"model": "j", "requestset": "verify--m", "n_requests": 1, "n_failed": 0,
         "n_truncated": 0, "n_refused": 0, "n_filtered": 0, "n_cached": 1, "n_other_model": 1},
        {"model": "m", "requestset": "answer", "n_requests": 5, "n_failed": 2,
         "n_truncated": 1, "n_refused": 1, "n_filtered": 1, "n_cached": 1, "n_other_model": 1},
    ]  # fmt: skip
    assert pd.read_csv(tmp_path / "calls.tsv", sep="\t").equals(table)
    assert "n truncated" in (tmp_path / "calls.md").read_text()


@pytest.mark.slow
def test_a_study_run_counts_truncated_verdicts_and_failed_answers(workdir):
    _evaluation_inputs(workdir)
    judge = workdir / "replay_judge/cancer_myth"
    first = [json.loads(x) for x in (judge / "verify--resp_a.jsonl").open()]
    first[0]["finish_reason"] = "length"  # a readable verdict, but cut off
    _jsonl(judge / "verify--resp_a.jsonl", first)
    cfg = write_config(workdir, _only_cancer_myth(_evaluation_config(workdir)))
    run_snakemake(workdir, configfile=cfg)

    results = workdir / "results/cancer_myth"
    scores = pd.read_csv(results / "scores/resp_a.tsv", sep="\t", keep_default_na=False)
    assert scores["score"].astype(str).tolist()[0] == ""  # never scored
    assert scores["parse_error"].tolist()[0].startswith("verifier truncated")
    calls = pd.read_csv(results / "tables/model_calls.tsv", sep="\t").set_index(
        ["model", "requestset"]
    )
    assert calls.loc[("judge", "verify--resp_a"), "n_truncated"] == 1
    assert calls.loc[("resp_b", "answer"), "n_failed"] == 1  # no stored answer for question 5
    assert calls.loc[("resp_a", "answer"), ["n_failed", "n_truncated"]].tolist() == [0, 0]
    assert _verdict(-1) in first[0]["text"]
