"""No PHI in any report page (issue #24, item 3).

A marker is planted in a Cancer-Myth question, in the stored answer to it and in the verifier's
stored reason (a judge quoting the question). The study is marked ``contains_phi``; the report
is built by ``snakemake --report`` as a zip bundle. Without ``report.include_phi_text`` the marker
is in no rendered page and no file of the bundle; with it, it is shown.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, link_workflow, other_studies_off, run_snakemake, write_config

from oncoeval.core.format import column_label
from oncoeval.report import phi

MARKER = "Zqxv7731Marker"
DEMO = REPO / "resources" / "demo" / "cancer_myth"


def _plant(workdir: Path) -> dict:
    """Copies of the demo question set, answers and verdicts, each holding the marker once."""
    data = workdir / "phi-inputs"
    questions = json.loads((DEMO / "questions.json").read_text())
    questions[0]["example_question"] = (
        f"My neighbour {MARKER} asks: " + questions[0]["example_question"]
    )
    data.mkdir()
    (data / "questions.json").write_text(json.dumps(questions))
    for kind, name in (("reference", "answer"), ("verdicts", "verify--myth-answers")):
        src = next((DEMO / "replay" / kind / "cancer_myth").glob("*.jsonl"))
        rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
        if kind == "reference":
            rows[0]["text"] = f"Dear {MARKER}, " + rows[0]["text"]
        else:
            verdict = json.loads(rows[0]["text"])
            verdict["Reason"] = f"The question of {MARKER} is corrected. " + verdict["Reason"]
            rows[0]["text"] = json.dumps(verdict)
        out = data / kind / "cancer_myth" / f"{name}.jsonl"
        out.parent.mkdir(parents=True)
        out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {
        "models": [
            {"id": "myth-answers", "backend": "replay", "path": str(data / "reference")},
            {"id": "myth-verdicts", "backend": "replay", "path": str(data / "verdicts")},
        ],
        "evaluate": [],
        "studies": {
            **other_studies_off("cancer_myth"),
            "cancer_myth": {
                "enabled": True,
                "contains_phi": True,
                "questions": str(data / "questions.json"),
                "evaluate": ["myth-answers"],
                "judges": {"verifier": "myth-verdicts", "classifier": None},
                "verifier_for": None,
                "human_scores": None,
            },
        },
    }


def _marked_files(workdir: Path, bundle: Path) -> list[str]:
    """Every rendered page and every bundle file that holds the marker."""
    found = [
        "page " + str(p.relative_to(workdir))
        for p in (workdir / "results" / "report").rglob("*")
        if p.is_file() and MARKER.encode() in p.read_bytes()
    ]
    for page in ("summary.html",):
        if MARKER in (workdir / "results" / page).read_text():
            found.append(f"page results/{page}")
    with zipfile.ZipFile(bundle) as zf:
        found += ["bundle " + n for n in zf.namelist() if MARKER.encode() in zf.read(n)]
    return found


@pytest.mark.slow
def test_a_contains_phi_study_shows_no_input_or_answer_text_in_any_report_page(tmp_path):
    workdir = link_workflow(tmp_path / "run")
    config = _plant(workdir)
    cfg = write_config(workdir, {**config, "report": {"include_phi_text": False}})
    run_snakemake(workdir, configfile=cfg)
    scores = workdir / "results" / "cancer_myth" / "scores" / "myth-answers.tsv"
    assert MARKER in scores.read_text()  # the judge did quote it, in the per-model table
    bundle = workdir / "report.zip"
    run_snakemake(workdir, "--report", str(bundle), configfile=cfg)
    assert _marked_files(workdir, bundle) == []
    # The pages still show the numbers and ids: the per-model page keeps its scores.
    page = workdir / "results" / "report" / "cancer_myth" / "scores" / "myth-answers.html"
    text = page.read_text()
    question_id = column_label("question_id")  # headers read in words (oncoeval.core.format)
    assert "(left out: the study" in text and question_id in text and "score" in text

    # Asked for, the text is shown: the same run, report.include_phi_text set.
    bundle.unlink()
    cfg = write_config(workdir, {**config, "report": {"include_phi_text": True}})
    run_snakemake(workdir, configfile=cfg)
    run_snakemake(workdir, "--report", str(bundle), configfile=cfg)
    shown = _marked_files(workdir, bundle)
    assert "page results/report/cancer_myth/scores/myth-answers.html" in shown
    assert "page results/report/cancer_myth/drilldown/myth-answers.html" in shown
    assert any(n.startswith("bundle ") for n in shown)


# ------------------------------------------------------------------------ the rule itself
def test_free_text_columns_are_left_out_and_numbers_ids_and_labels_stay():
    df = pd.DataFrame(
        {
            "question_id": ["q1", "q2"],
            "category": ["only/standard treatment", "misc"],
            "score": [1, -1],
            "reason": ["quotes the question", ""],
            "scores: reason": ["quote", None],
            "first_error": ["HTTP 400: echoes the prompt", ""],
            "value": [0.5, 0.25],  # a number under a text name stays
            "from_record": ["short", "a question copied from the input record, " * 3],
        }
    )
    shown = phi.leave_out_text(df, "cancer_myth")
    assert shown["reason"].tolist() == [phi.LEFT_OUT, ""]  # an empty cell stays empty
    assert shown["scores: reason"].tolist()[0] == phi.LEFT_OUT
    assert shown["first_error"].tolist()[0] == phi.LEFT_OUT
    assert set(shown["from_record"]) == {phi.LEFT_OUT}  # prose under an undeclared name
    for kept in ("question_id", "category", "score", "value"):
        assert shown[kept].tolist() == df[kept].tolist()
    assert df["reason"].tolist()[0] == "quotes the question"  # the input frame is untouched


def test_a_study_declared_label_stays_under_a_text_name():
    """A guidelines rollout's ``answer`` is its kind (path, not_compliant, none): a label the
    study declares; another study's ``answer`` is an answer and is left out."""
    df = pd.DataFrame({"patient_id": ["p1"], "answer": ["not_compliant"], "path": ["A -> B"]})
    assert phi.leave_out_text(df, "guidelines")["answer"].tolist() == ["not_compliant"]
    assert phi.leave_out_text(df, "cancer_myth")["answer"].tolist() == [phi.LEFT_OUT]
    assert phi.leave_out_text(df, "guidelines")["path"].tolist() == ["A -> B"]
