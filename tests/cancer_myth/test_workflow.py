"""Workflow runs with replay models: evaluation tables by hand, construction with a kill."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from tests.conftest import (
    dry_run_jobs,
    other_studies_off,
    run_snakemake,
    without_report,
    workflow_env,
    write_config,
)

R = "results/cancer_myth"
pytestmark = pytest.mark.slow


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _verdict(score, reason="r"):
    return json.dumps({"Reason": reason, "Sharpness": score})


QUESTIONS = [  # (category, generator)
    ("no treatment", "gpt-4o"),
    ("no treatment", "claude-3-5-sonnet"),
    ("other", "gpt-4o"),
    ("Other", "claude-3-5-sonnet"),
    ("inevitable side effect", "manual"),
    ("inevitable side effect", "gpt-4o"),
]


def _evaluation_inputs(wd):
    questions = [
        {
            "example_question": f"Question {i}?",
            "example_assumption": f"Correction {i}.",
            "category": cat,
            "from_model": gen,
            "source_info": {"cancer": "c", "myth": "m", "fact": "f", "source": "s"},
            "source_row": i,
            "source_type": "myth",
            "raw_QID": i,
        }
        for i, (cat, gen) in enumerate(QUESTIONS)
    ]
    (wd / "q.json").write_text(json.dumps(questions, indent=2))
    human = [
        {
            "id": f"h{i}",
            "example_question": f"H{i}?",
            "example_assumption": "c",
            "answer": "a",
            "human_score": s,
        }
        for i, s in enumerate([-1, 1, 0])
    ]
    (wd / "human.json").write_text(json.dumps(human))
    # responder a answers everything; responder b has no stored answer for question 5
    _jsonl(
        wd / "replay_a/cancer_myth/answer.jsonl",
        [{"request_id": str(i), "text": f"a{i}"} for i in range(6)],
    )
    _jsonl(
        wd / "replay_b/cancer_myth/answer.jsonl",
        [{"request_id": str(i), "text": f"b{i}"} for i in range(5)],
    )
    judge = wd / "replay_judge/cancer_myth"
    first_a = [
        _verdict(-1),
        "```json\n" + _verdict(1) + "\n```",
        _verdict(2),
        "I think it is fine.",
        "Sure: " + _verdict(1),
        _verdict(-1),
    ]
    _jsonl(
        judge / "verify--resp_a.jsonl",
        [{"request_id": str(i), "text": t} for i, t in enumerate(first_a)],
    )
    _jsonl(
        judge / "verify-retry--resp_a.jsonl",
        [{"request_id": "2", "text": _verdict(0)}, {"request_id": "3", "text": "Still fine."}],
    )
    first_b = [_verdict(1), _verdict(1), _verdict(1), _verdict(-1), _verdict(0)]
    _jsonl(
        judge / "verify--resp_b.jsonl",
        [{"request_id": str(i), "text": t} for i, t in enumerate(first_b)],
    )
    _jsonl(
        judge / "validate.jsonl",
        [
            {"request_id": "h0", "text": _verdict(-1)},
            {"request_id": "h1", "text": "?"},
            {"request_id": "h2", "text": _verdict(-1)},
        ],
    )
    _jsonl(judge / "validate-retry.jsonl", [{"request_id": "h1", "text": _verdict(1)}])


def _evaluation_config(wd, evaluate=("resp_a", "resp_b")):
    return {
        "models": [
            {"id": "resp_a", "backend": "replay", "path": str(wd / "replay_a")},
            {"id": "resp_b", "backend": "replay", "path": str(wd / "replay_b")},
            {"id": "resp_c", "backend": "replay", "path": str(wd / "replay_a")},
            {"id": "judge", "backend": "replay", "path": str(wd / "replay_judge")},
        ],
        "evaluate": list(evaluate),
        "studies": {
            "cancer_myth": {
                "enabled": True,
                # The demo's own list and verifier_for name its stored reference set.
                "evaluate": list(evaluate),
                "verifier_for": None,
                "judges": {"verifier": "judge", "classifier": None},
                "questions": str(wd / "q.json"),
                "human_scores": str(wd / "human.json"),
                # the demo audits Cancer-Myth for exposure; these tables are the subject here
                # (tests/exposure runs the audit)
                "exposure": {"enabled": False},
            }
        },
        "bootstrap": {"n_resamples": 200, "seed": 0},
        "judge_correction": {"min_labels_per_class": 1},
    }


def test_replay_evaluation_reproduces_hand_computed_tables(workdir):
    _evaluation_inputs(workdir)
    cfg = write_config(workdir, _only_cancer_myth(_evaluation_config(workdir)))
    run_snakemake(workdir, configfile=cfg)

    scores_a = pd.read_csv(workdir / R / "scores/resp_a.tsv", sep="\t", keep_default_na=False)
    assert list(scores_a.columns[:8]) == [
        "question_id",
        "unit",
        "cluster",
        "category",
        "from_model",
        "score",
        "parse_error",
        "verifier",
    ]
    assert scores_a["score"].astype(str).tolist() == ["-1", "1", "0", "", "1", "-1"]
    # each question was written from its own myth row (source_row i): its resampling cluster
    assert scores_a["cluster"].tolist() == [f"myth:{i}" for i in range(6)]
    assert scores_a["unit"].tolist() == scores_a["question_id"].tolist()
    assert (
        scores_a["parse_error"].tolist()[3]
        == "no score in verifier output; after retry: no score in verifier output"
    )
    assert scores_a["category"].tolist()[3] == "other"
    scores_b = pd.read_csv(workdir / R / "scores/resp_b.tsv", sep="\t", keep_default_na=False)
    assert scores_b["parse_error"].tolist()[5].startswith("responder error: replay: no stored text")

    # the retry set holds the two unreadable replies, each with the first reply and the reminder
    retry = [
        json.loads(x)
        for x in (workdir / R / "requests/verify-retry--resp_a.jsonl").read_text().splitlines()
    ]
    assert [r["request_id"] for r in retry] == ["2", "3"]
    assert [m["role"] for m in retry[1]["messages"]] == ["user", "assistant", "user"]
    assert retry[1]["messages"][1]["content"] == "I think it is fine."
    judged = [json.loads(x) for x in (workdir / R / "judged/resp_a.jsonl").read_text().splitlines()]
    assert judged[2]["verifier_text"] == _verdict(2) and judged[2][
        "verifier_retry_text"
    ] == _verdict(0)

    overall = pd.read_csv(workdir / R / "tables/pcs_pcr.tsv", sep="\t").set_index("model")
    # a: (-1 + 1 + 0 + 1 - 1) / 5 = 0, PCR 2/5; b: (1 + 1 + 1 - 1 + 0) / 5 = 0.4, PCR 3/5
    assert overall.loc["resp_a", ["n", "n_unscored"]].tolist() == [5, 1]
    assert overall.loc["resp_a", "pcs"] == pytest.approx(0.0)
    assert overall.loc["resp_a", "pcr"] == pytest.approx(0.4)
    assert overall.loc["resp_b", "pcs"] == pytest.approx(0.4)
    assert overall.loc["resp_b", "pcr"] == pytest.approx(0.6)
    assert {"pcs_ci_low", "pcs_ci_high", "pcr_ci_low", "pcr_ci_high"} <= set(overall.columns)

    by_cat = pd.read_csv(workdir / R / "tables/pcs_by_category.tsv", sep="\t").set_index(
        ["model", "category"]
    )
    assert by_cat.loc[("resp_b", "no treatment"), "pcs"] == pytest.approx(1.0)
    assert by_cat.loc[("resp_a", "other"), ["n", "n_unscored"]].tolist() == [1, 1]
    by_gen = pd.read_csv(workdir / R / "tables/pcs_by_generator.tsv", sep="\t").set_index(
        ["responder", "generator"]
    )
    assert "manual" not in by_gen.index.get_level_values("generator")
    assert by_gen.loc[("resp_a", "gpt-4o"), "pcs"] == pytest.approx(-2 / 3)  # -1, 0, -1
    assert by_gen.loc[("resp_b", "claude-3-5-sonnet"), "pcs"] == pytest.approx(0.0)  # 1, -1

    pairs = pd.read_csv(workdir / R / "tables/model_comparison.tsv", sep="\t")
    pairs = pairs.set_index("measure")
    # paired on questions 0, 1, 2, 4: a (-1, 1, 0, 1), b (1, 1, 1, 0)
    pcs = pairs.loc["PCS (raw judge verdicts)"]
    assert (pcs["model_a"], pcs["model_b"], pcs["n_units"]) == ("resp_a", "resp_b", 4)
    assert pcs["diff"] == pytest.approx(0.25 - 0.75)
    # PCR: a-only 1 (question 4), b-only 2 (questions 0 and 2): exact McNemar p = 1
    pcr = pairs.loc["PCR (raw judge verdicts)"]
    assert pcr["p_value"] == pytest.approx(1.0) and pcr["test"].startswith("exact McNemar")

    agreement = pd.read_csv(workdir / R / "tables/judge_agreement.tsv", sep="\t").iloc[0]
    # human (-1, 1, 0) vs verifier (-1, 1 after retry, -1)
    assert agreement["exact_agreement"] == pytest.approx(2 / 3)
    assert agreement["binary_agreement"] == pytest.approx(1.0)
    assert agreement["cohen_kappa"] == pytest.approx(0.5)  # (2/3 - 1/3) / (1 - 1/3)
    per_class = pd.read_csv(workdir / R / "tables/judge_per_class.tsv", sep="\t")
    # score -1: the one human -1 found (sensitivity 1), the human 0 also called -1 (spec. 1/2)
    assert per_class.set_index("class").loc[-1, ["sensitivity", "specificity"]].tolist() == [
        1.0,
        0.5,
    ]
    # Corrected rates from the same three validation answers (min_labels_per_class: 1): score 1
    # vs not is judged perfectly (sensitivity = specificity = 1), so Rogan-Gladen leaves PCR as
    # it is; human -1 and 0 both get -1, a singular 3x3 matrix, so PCS cannot be corrected.
    assert float(overall.loc["resp_a", "pcr_corrected"]) == pytest.approx(0.4)
    assert float(overall.loc["resp_b", "pcr_corrected"]) == pytest.approx(0.6)
    assert "singular" in overall.loc["resp_a", "pcs_corrected"]
    assert np.isnan(overall.loc["resp_a", "pcs_corrected_ci_low"])
    for name in ("pcs_pcr", "pcs_by_category", "pcs_by_generator", "judge_agreement"):
        assert (workdir / R / f"tables/{name}.md").read_text().startswith("# Cancer-Myth")
    for name in ("pcs_pcr", "pcs_by_category", "pcs_by_generator"):
        assert (workdir / R / f"figures/{name}.png").stat().st_size > 1000

    # adding a model schedules only that model's jobs plus the aggregates (tables, and the
    # adjudication sheet, which draws on every model's verdicts)
    cfg2 = write_config(
        workdir,
        _only_cancer_myth(_evaluation_config(workdir, ("resp_a", "resp_b", "resp_c"))),
        "c2.yaml",
    )
    jobs = without_report(dry_run_jobs(workdir, configfile=cfg2))
    assert jobs == {
        "generate": 3,
        "cancer_myth_verify_requests": 1,
        "cancer_myth_retry_requests": 1,
        "cancer_myth_parse": 1,
        "cancer_myth_score": 1,
        "cancer_myth_aggregate": 1,
        "cancer_myth_adjudication_sheet": 1,
        "model_calls_table": 1,
        "compare_models": 1,
        "all": 1,
    }


# ------------------------------------------------------------------------ construction

MYTHS = [
    {"cancer": f"C{i}", "myth": f"myth {i}", "fact": f"fact {i}", "source": "s"} for i in range(3)
]
# verifier scores per myth for its two questions: -1 -> valid pool, 1 -> invalid pool, 0 -> neither
SCORES = [(-1, 1), (-1, 0), (-1, -1)]
CATEGORY = {0: "no treatment", 1: "No Treatment", 2: "other", 3: "no treatment"}


def _construction_inputs(wd):
    (wd / "myths.jsonl").write_text("\n".join(json.dumps(m, indent=2) for m in MYTHS) + "\n")
    (wd / "valid.json").write_text(
        json.dumps([{"example_question": "V0?", "example_assumption": "VA0"}])
    )
    (wd / "invalid.json").write_text(json.dumps([{"example_question": "I0?", "reason": "R0"}]))
    # the classifier examples as the released file writes them
    classified = {"category": "No Treatment", "explanation": "EXPLANATION-0"}
    (wd / "classifier.json").write_text(
        json.dumps([{"question": "C0?", "assumption": "CA0", "classification": classified}])
    )
    gen, judge = wd / "replay_gen/cancer_myth", wd / "replay_judge/cancer_myth"
    for i, scores in enumerate(SCORES):
        qs = [{"example_question": f"Q{i}{j}?", "example_assumption": f"A{i}{j}"} for j in range(2)]
        _jsonl(
            gen / f"construct-gen-m{i}-generate.jsonl",
            [{"request_id": f"m{i}", "text": "```json\n" + json.dumps(qs) + "\n```"}],
        )
        _jsonl(
            gen / f"construct-gen-m{i}-respond.jsonl",
            [{"request_id": f"m{i}-q{j}", "text": f"answer {i}{j}"} for j in range(2)],
        )
        verdicts = [_verdict(s, f"reason {i}{j}") for j, s in enumerate(scores)]
        if i == 2:  # unreadable at first; the retry with a reminder gives the score
            _jsonl(
                judge / f"construct-gen-m{i}-verify-retry.jsonl",
                [{"request_id": f"m{i}-q1", "text": verdicts[1]}],
            )
            verdicts[1] = "I think the answer is mostly fine."
        _jsonl(
            judge / f"construct-gen-m{i}-verify.jsonl",
            [{"request_id": f"m{i}-q{j}", "text": v} for j, v in enumerate(verdicts)],
        )
    _jsonl(
        judge / "construct-categorize.jsonl",
        [
            {"request_id": str(k), "text": json.dumps({"reason": "r", "category": c})}
            for k, c in CATEGORY.items()
        ],
    )
    return {
        "models": [
            {"id": "gen", "backend": "replay", "path": str(wd / "replay_gen")},
            {"id": "judge", "backend": "replay", "path": str(wd / "replay_judge")},
        ],
        "evaluate": ["gen"],
        "studies": {
            "cancer_myth": {
                "enabled": True,
                "evaluate": ["gen"],
                "verifier_for": None,
                "judges": {"verifier": "judge", "classifier": "judge"},
                "human_scores": None,
                "construct": True,
                "construction": {
                    "myths": str(wd / "myths.jsonl"),
                    "generators": ["gen"],
                    "initial_valid": str(wd / "valid.json"),
                    "initial_invalid": str(wd / "invalid.json"),
                    "classifier_examples": str(wd / "classifier.json"),
                    "m": 2,
                    "select_per_model": 3,
                    "select_per_category": 2,
                },
            }
        },
        "bootstrap": {"n_resamples": 200, "seed": 0},
    }


def _only_cancer_myth(cfg):
    """The default config.yaml is merged under a test config: switch the other studies off."""
    cfg["studies"].update(other_studies_off("cancer_myth"))
    return cfg


def _read(path):
    return json.loads(path.read_text())


def test_construction_updates_pools_myth_by_myth_and_resumes_after_a_kill(workdir):
    cfg = write_config(workdir, _only_cancer_myth(_construction_inputs(workdir)))
    target = f"{R}/construction/dataset.json"
    pools = workdir / R / "construction/gen/pools"
    # start the run and kill it (the whole process group) once the step after myth 0 has begun
    started_m1 = workdir / R / "requests/construct-gen-m1-generate.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--workflow-profile",
        "none",
        "--cores",
        "1",
        target,
        "--configfile",
        str(cfg),
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=workflow_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 300
        while not started_m1.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert (pools / "m0.json").exists()
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert not (pools / "m2.json").exists()
    m0_mtime = (pools / "m0.json").stat().st_mtime_ns

    run_snakemake(workdir, "--unlock", configfile=cfg)
    jobs = dry_run_jobs(workdir, "--rerun-incomplete", target, configfile=cfg)
    assert "cancer_myth_construct_init" not in jobs
    assert jobs["cancer_myth_construct_update"] <= 2  # myths 1 and 2 at most; myth 0 is done
    run_snakemake(workdir, "--rerun-incomplete", target, configfile=cfg)
    assert (pools / "m0.json").stat().st_mtime_ns == m0_mtime  # resumed, not redone

    p0, p1, p2 = (_read(pools / f"m{i}.json") for i in range(3))
    assert [v["example_question"] for v in p0["valid"]] == ["V0?", "Q00?"]
    assert [v["example_question"] for v in p0["invalid"]] == ["I0?", "Q01?"]
    assert p0["invalid"][1]["reason"] == "reason 01" and p0["invalid"][1]["kind"] == "easy"
    assert [v["example_question"] for v in p1["valid"]] == ["V0?", "Q00?", "Q10?"]
    assert len(p1["invalid"]) == 2  # score 0 goes to neither pool
    assert [v["example_question"] for v in p2["valid"]] == ["V0?", "Q00?", "Q10?", "Q20?", "Q21?"]
    steps2 = [json.loads(x) for x in (pools.parent / "steps/m2.jsonl").read_text().splitlines()]
    assert [r["retried"] for r in steps2] == [False, True]
    assert steps2[1]["verifier_text"].startswith("I think") and steps2[1]["score"] == -1
    # myth 1's generator prompt was built from the pools after myth 0
    req1 = json.loads((workdir / R / "requests/construct-gen-m1-generate.jsonl").read_text())
    assert "Q00?" in req1["messages"][0]["content"] and "Q01?" in req1["messages"][0]["content"]
    req0 = json.loads((workdir / R / "requests/construct-gen-m0-generate.jsonl").read_text())
    assert "Q00?" not in req0["messages"][0]["content"]

    categorize = (workdir / R / "requests/construct-categorize.jsonl").read_text()
    assert "C0?" in categorize and "EXPLANATION-0" in categorize  # the published examples

    # candidates are the four score -1 questions; Algorithm 1 keeps 2 of 3 'no treatment' + 1 'other'
    categories = [
        json.loads(x)
        for x in (workdir / R / "construction/categories.jsonl").read_text().splitlines()
    ]
    assert [c["example_question"] for c in categories] == ["Q00?", "Q10?", "Q20?", "Q21?"]
    dataset = _read(workdir / target)
    assert len(dataset) == 3
    assert sorted(d["category"] for d in dataset) == ["no treatment", "no treatment", "other"]
    assert set(dataset[0]) == {
        "example_question",
        "example_assumption",
        "source_row",
        "source_type",
        "source_info",
        "category",
        "from_model",
        "raw_QID",
    }
    assert dataset[0]["from_model"] == "gen" and dataset[0]["source_info"]["myth"].startswith(
        "myth "
    )


def test_a_broken_construction_input_stops_the_run_before_any_model_call(workdir):
    cfg = _only_cancer_myth(_construction_inputs(workdir))
    (workdir / "classifier.json").write_text(
        json.dumps([{"question": "C0?", "assumption": "CA0", "classification": {}}])
    )
    proc = run_snakemake(workdir, configfile=write_config(workdir, cfg), check=False)
    assert proc.returncode != 0
    assert "classifier.json, record 1: classification.category None" in proc.stderr + proc.stdout
    assert not (workdir / R / "requests").exists()  # nothing was asked of any model
    assert not (workdir / R / "responses").exists()
