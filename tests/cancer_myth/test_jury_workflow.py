"""A jury of three replayed verifiers through the workflow, every figure worked by hand."""

import json
import shutil

import pandas as pd
import pytest

from tests.cancer_myth.test_workflow import (
    R,
    _evaluation_config,
    _evaluation_inputs,
    _jsonl,
    _only_cancer_myth,
    _verdict,
)
from tests.conftest import run_snakemake, write_config

# Final readings of juror "judge" on resp_a (after its retries): -1, 1, 0, unreadable, 1, -1.
JUDGE2 = [-1, -1, 0, 1, 0, 1]
JUDGE3 = [-1, 1, 1, 1, -1, 0]
VALIDATE2, VALIDATE3 = [-1, 1, 0], [0, 1, 0]  # on h0, h1, h2


def _jury_inputs(wd):
    _evaluation_inputs(wd)
    judge = wd / "replay_judge/cancer_myth"
    # In a jury each juror's retry set is its own (it quotes that juror's first reply).
    shutil.copy(judge / "verify-retry--resp_a.jsonl", judge / "verify-retry-by-judge--resp_a.jsonl")
    shutil.copy(judge / "validate-retry.jsonl", judge / "validate-retry-by-judge.jsonl")
    for name, verdicts, validation in (
        ("judge2", JUDGE2, VALIDATE2),
        ("judge3", JUDGE3, VALIDATE3),
    ):
        folder = wd / f"replay_{name}/cancer_myth"
        _jsonl(
            folder / "verify--resp_a.jsonl",
            [{"request_id": str(i), "text": _verdict(s)} for i, s in enumerate(verdicts)],
        )
        _jsonl(
            folder / "validate.jsonl",
            [{"request_id": f"h{i}", "text": _verdict(s)} for i, s in enumerate(validation)],
        )


@pytest.mark.slow  # two Snakemake runs, as the other Cancer-Myth workflow tests
def test_jury_majority_ties_fleiss_kappa_and_corrected_rates(workdir):
    _jury_inputs(workdir)
    cfg = _only_cancer_myth(_evaluation_config(workdir, evaluate=("resp_a",)))
    for name in ("judge2", "judge3"):
        cfg["models"].append(
            {"id": name, "backend": "replay", "path": str(workdir / f"replay_{name}")}
        )
    cfg["studies"]["cancer_myth"]["judges"]["verifier"] = ["judge", "judge2", "judge3"]
    run_snakemake(workdir, configfile=write_config(workdir, cfg))

    retry = workdir / R / "requests/verify-retry-by-judge--resp_a.jsonl"
    assert [json.loads(x)["request_id"] for x in retry.read_text().splitlines()] == ["2", "3"]
    assert (workdir / R / "requests/verify-retry-by-judge2--resp_a.jsonl").read_text() == ""

    scores = pd.read_csv(workdir / R / "scores/resp_a.tsv", sep="\t", keep_default_na=False)
    # votes: (-1,-1,-1) (1,-1,1) (0,0,1) (-,1,1) (1,0,-1) (-1,1,0)
    assert scores["score"].astype(str).tolist() == ["-1", "1", "0", "1", "", ""]
    assert scores["parse_error"].tolist()[4:] == ["tie", "tie"]
    assert json.loads(scores["votes"][3]) == [None, 1, 1]

    overall = pd.read_csv(workdir / R / "tables/pcs_pcr.tsv", sep="\t").set_index("model")
    row = overall.loc["resp_a"]
    assert (row["n"], row["n_unscored"]) == (4, 2)
    assert row["pcs"] == pytest.approx(0.25) and row["pcr"] == pytest.approx(0.5)
    # The jury's combined validation verdicts (-1, 1, 0) match the humans exactly: an identity
    # confusion matrix, so the corrected rates equal the raw ones.
    assert float(row["pcs_corrected"]) == pytest.approx(0.25)
    assert float(row["pcr_corrected"]) == pytest.approx(0.5)
    agreement = pd.read_csv(workdir / R / "tables/judge_agreement.tsv", sep="\t").iloc[0]
    assert agreement["verifier"] == "judge+judge2+judge3"
    assert agreement["exact_agreement"] == pytest.approx(1.0)

    jury = pd.read_csv(workdir / R / "tables/jury_agreement.tsv", sep="\t").iloc[0]
    assert (jury["n_jurors"], jury["n_all_readable"], jury["n_tie"]) == (3, 5, 2)
    # Items with three readable votes, counts over (-1, 0, 1): [3,0,0] [1,0,2] [0,2,1] [1,1,1]
    # [1,1,1]: P_bar = 75/225, P_e = (36 + 16 + 25)/225 -> kappa = (75 - 77) / (225 - 77).
    assert jury["fleiss_kappa"] == pytest.approx(-2 / 148, abs=1e-6)  # %.6g in the TSV
    assert jury["n_unanimous"] == 1

    # Adjudication: the answers where the jury was unsure, blinded, then read back as labels.
    sheet = pd.read_csv(workdir / R / "adjudication/sheet.tsv", sep="\t", dtype=str)
    key = pd.read_csv(workdir / R / "adjudication/key.tsv", sep="\t", dtype=str)
    why = dict(zip(key["question_id"], key["why"], strict=True))
    # 0: unanimous; 1, 2: jurors disagree; 3: one juror needed its retry; 4, 5: ties
    assert why == {
        "1": "jurors disagree",
        "2": "jurors disagree",
        "3": "verdict needed a retry",
        "4": "jury tie",
        "5": "jury tie",
    }
    assert "resp_a" not in sheet.to_csv() and "model" not in sheet.columns
    labels = {"1": "1", "2": "0", "3": "-1", "4": "0", "5": ""}
    item_of = dict(zip(key["question_id"], key["item"], strict=True))
    sheet["human_score"] = [
        labels[q] for q in key.set_index("item").loc[sheet["item"], "question_id"]
    ]
    assert set(sheet["item"]) == {item_of[q] for q in labels}
    filled = workdir / "filled.tsv"
    sheet.to_csv(filled, sep="\t", index=False)
    scores_mtime = (workdir / R / "scores/resp_a.tsv").stat().st_mtime_ns
    cfg["studies"]["cancer_myth"]["adjudicated"] = str(filled)
    run_snakemake(workdir, configfile=write_config(workdir, cfg))
    assert (workdir / R / "scores/resp_a.tsv").stat().st_mtime_ns == scores_mtime
    agreement = pd.read_csv(workdir / R / "tables/judge_agreement.tsv", sep="\t").iloc[0]
    # 3 human scores (all matched) + 4 adjudicated: (1, 1), (0, 0), (-1, 1), (0, tie -> unscored)
    assert (agreement["n"], agreement["n_unscored"]) == (6, 1)
    assert agreement["exact_agreement"] == pytest.approx(5 / 6)


def test_a_jury_mean_is_rounded_to_a_score_for_agreement(tmp_path):
    from oncoeval.stats.bootstrap import BootstrapSettings
    from oncoeval.studies.cancer_myth import aggregate

    human = [
        {
            "id": f"h{i}",
            "example_question": "q",
            "example_assumption": "c",
            "answer": "a",
            "human_score": s,
        }
        for i, s in enumerate([1, -1, 0])
    ]
    (tmp_path / "human.json").write_text(json.dumps(human))
    # Means: h0 (1 + 1 + 0) / 3 = 0.67 -> 1; h1 (-1 - 1 + 1) / 3 = -0.33 -> 0; h2 0 -> 0
    juror_scores = {"j1": [1, -1, 0], "j2": [1, -1, 0], "j3": [0, 1, 0]}
    firsts, retries = [], []
    for name, scores in juror_scores.items():
        first, retry = tmp_path / f"{name}.jsonl", tmp_path / f"{name}-retry.jsonl"
        _jsonl(
            first,
            [
                {"request_id": f"h{i}", "model": name, "text": _verdict(s)}
                for i, s in enumerate(scores)
            ],
        )
        retry.write_text("")
        firsts.append(first)
        retries.append(retry)
    out = {k: tmp_path / f"{k}.tsv" for k in ("summary", "confusion", "pairs", "per_class")}
    aggregate.judge_validation(
        {"human": tmp_path / "human.json", "first": firsts, "retry": retries},
        {
            "judge_agreement": out["summary"],
            "judge_confusion": out["confusion"],
            "verifier_pairs": out["pairs"],
            "judge_per_class": out["per_class"],
        },
        BootstrapSettings(200),
        list(juror_scores),
        "mean",
    )
    pairs = pd.read_csv(out["pairs"], sep="\t")
    # The pairs keep the jury's mean (the corrected rates then give their reason); the agreement
    # tables count the rounded scores (1, 0, 0) against the humans (1, -1, 0).
    assert pairs["verifier_score"].tolist() == pytest.approx([2 / 3, -1 / 3, 0.0], abs=1e-6)
    summary = pd.read_csv(out["summary"], sep="\t").iloc[0]
    assert summary["exact_agreement"] == pytest.approx(2 / 3)
