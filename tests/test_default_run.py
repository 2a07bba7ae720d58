"""The default config (demo data, embedded models, offline, CPU) runs every study end to end.

One complete run of `snakemake` on config/config.yaml, as `make run` does, then checks per study
and the report. It is the slowest test (the real SmolLM2 answers every study's requests).
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pandas as pd
import pytest
import yaml
from conftest import REPO, STUDIES, run_snakemake


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    from conftest import WORKFLOW_PARTS

    workdir = tmp_path_factory.mktemp("default-run")
    for part in WORKFLOW_PARTS:
        (workdir / part).symlink_to(REPO / part)
    run_snakemake(workdir, timeout=2700)
    run_snakemake(workdir, "--report", "results/report.html", timeout=600)
    return workdir


def _tsv(path):
    return pd.read_csv(path, sep="\t")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_study_is_enabled_in_the_default_config():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert [s for s in STUDIES if config["studies"][s]["enabled"]] == list(STUDIES)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("study", STUDIES)
def test_each_study_writes_scores_tables_and_figures(default_run, study):
    results = default_run / "results" / study
    scores = _tsv(results / "scores" / "smollm2.tsv")
    assert len(scores) > 0
    tables = sorted((results / "tables").glob("*.tsv"))
    assert tables, f"no tables for {study}"
    for table in tables:
        assert table.with_suffix(".md").exists(), f"{table.name} has no Markdown twin"
    assert any((results / "figures").glob("*.png"))
    # Every response of the embedded model is accounted for: text or a recorded error.
    for path in (results / "responses" / "smollm2").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            assert (row["text"] is not None) or row["error"], path


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_side_effects_tables_one_to_seven_cover_every_response(default_run):
    results = default_run / "results" / "side_effects"
    scores = _tsv(results / "scores" / "smollm2.tsv")
    assert len(scores) == 6 * 2 * 4  # profiles x variants x regimes
    assert scores["precision"].dropna().between(0, 1).all()
    for i in range(1, 8):
        assert (results / "tables" / f"table{i}.tsv").exists()


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_report_bundles_the_results(default_run):
    report = default_run / "results" / "report.html"
    assert report.stat().st_size > 10_000
    # A rerun of the finished default run has nothing to do and calls no model.
    proc = run_snakemake(default_run, "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
@pytest.mark.parametrize("window", ((1366, 768), (1920, 1080), (2560, 1440)), ids=str)
def test_the_demo_reports_first_screen_holds_its_headline_table(default_run, window):
    """The demo's report (SmolLM2 beside the stored answers: longer model ids, warnings, reasons
    in place of values) opens on its whole headline table at each window size, as the replay
    run's does (tests/report/test_report_workflow.py)."""
    sys.path.insert(0, str(REPO / "tests" / "report"))
    import browser

    from oncoeval.report import landing

    report = default_run / "results" / "report.html"
    found = browser.measure(report, f"#{landing.TABLE_ID}", window)
    assert browser.first_screen_problems(found) == [], found
    assert "smollm2" in found["text"]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_cancer_myth_reference_answers_are_the_ceiling_row(default_run):
    # Stored answers judged by their stored verdicts (verifier_for) beside SmolLM2's answers
    # judged by SmolLM2; SmolLM2's validation does not correct the stored verdicts' row.
    table = pd.read_csv(default_run / "results/cancer_myth/tables/pcs_pcr.tsv", sep="\t")
    rows = table.set_index("model")
    assert set(rows.index) == {"smollm2", "cancer-myth-reference-replay"}
    reference = rows.loc["cancer-myth-reference-replay"]
    assert (reference["n"], reference["n_unscored"]) == (21, 0)
    assert float(reference["pcs"]) == 1.0 and float(reference["pcr"]) == 1.0
    reason = "judged by cancer-myth-reference-verdicts, not the validated verifier"
    assert reference["pcs_corrected"] == reason
    scores = _tsv(default_run / "results/cancer_myth/scores/cancer-myth-reference-replay.tsv")
    assert set(scores["verifier"]) == {"cancer-myth-reference-verdicts"}
    smollm2 = _tsv(default_run / "results/cancer_myth/scores/smollm2.tsv")
    assert set(smollm2["verifier"]) == {"smollm2"}


COMPARISON_COLUMNS = [
    "measure", "model_a", "model_b", "n_units", "value_a", "value_b", "diff", "diff_ci_low",
    "diff_ci_high", "p_value", "p_adjusted", "test", "adjustment", "family", "m", "ci_level",
    "significant", "verdict", "margin", "mdd",
]  # fmt: skip
LEADERBOARD_COLUMNS = [
    "measure", "model", "value", "ci_low", "ci_high", "n_units", "n_unscored", "rank", "best",
    "p_vs_best_adjusted", "standing", "mdd", "family",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("study", STUDIES)
def test_each_study_compares_its_models_in_its_tables_report_and_summary(default_run, study):
    from oncoeval.report import catalog
    from oncoeval.workflow.comparison import study_measures

    tables = default_run / "results" / study / "tables"
    comparison = _tsv(tables / "model_comparison.tsv")
    board = _tsv(tables / "leaderboard.tsv")
    assert set(COMPARISON_COLUMNS) <= set(comparison.columns)
    assert set(LEADERBOARD_COLUMNS) <= set(board.columns)
    # The demo evaluates SmolLM2 and at least one replayed reference set in every study.
    measures = {m.name for m in study_measures(study)}
    assert measures <= set(comparison["measure"]) and measures <= set(board["measure"])
    # Rows that could not be compared (Cancer-Myth's reference set judged by its own stored
    # verdicts has no corrected rate) carry no n and say why in `test`; the others have units.
    compared = ~comparison["test"].astype(str).str.startswith("not compared")
    assert (comparison.loc[compared, "n_units"] > 0).all()
    assert comparison.loc[~compared, "n_units"].isna().all()
    assert comparison["p_adjusted"].dropna().ge(comparison["p_value"].dropna()).all()
    for _, part in board[board["measure"].isin(measures)].groupby("measure"):
        leader = part[part["model"] == part["best"]]
        assert len(leader) == 1 and leader["standing"].eq("leader").all()
    # every row's interval and decision agree (issue #34): significant exactly when the printed
    # interval excludes 0, and p_adjusted <= alpha exactly then
    tested = comparison.dropna(subset=["diff_ci_low", "diff_ci_high", "p_adjusted"])
    excludes = (tested["diff_ci_low"] > 0) | (tested["diff_ci_high"] < 0)
    assert (tested["significant"].astype(str) == excludes.astype(str)).all()
    assert ((tested["p_adjusted"] <= 0.05) == excludes).all()
    assert (tested["diff_ci_high"] > tested["diff_ci_low"]).all()
    assert comparison["family"].eq("primary").sum() >= 1
    report = default_run / "results" / "report" / study / "tables"
    assert (report / "model_comparison.html").exists() and (report / "leaderboard.html").exists()
    summary = (default_run / "results" / "summary.md").read_text(encoding="utf-8")
    assert "Which model leads, and where the others stand" in summary
    # the word "tied" leaves every output: the tables, the summary, the landing page
    texts = [
        tables / f"{n}.{e}" for n in ("model_comparison", "leaderboard") for e in ("tsv", "md")
    ]
    for path in [*texts, default_run / "results/summary.md", default_run / "results/summary.tsv"]:
        assert "tied" not in path.read_text(encoding="utf-8").lower(), path
    assert f"| {catalog.study_name(study)} " in summary  # the study by its name


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("study", STUDIES)
def test_every_interval_table_names_method_unit_cluster_and_n(default_run, study):
    """Every table of the demo run with an interval says how it was made: the method, the
    resampling unit, the cluster and n (issue #26 item 3); the per-unit score files carry the
    unit and cluster ids."""
    results = default_run / "results" / study
    checked = 0
    for tsv in sorted((results / "tables").glob("*.tsv")):
        header = tsv.read_text(encoding="utf-8").splitlines()[0].split("\t")
        if not any(column.endswith("ci_low") for column in header):
            continue
        caption = tsv.with_suffix(".md").read_text(encoding="utf-8")
        assert "Intervals (" in caption, f"{tsv.name}: no interval method named"
        assert re.search(r"\bunit\b", caption, re.IGNORECASE), f"{tsv.name}: no unit named"
        assert "cluster" in caption, f"{tsv.name}: no cluster named"
        assert re.search(r"\bn(_\w+)?: ", caption), f"{tsv.name}: n not named"
        checked += 1
    assert checked >= 2  # the study's own table(s) and the comparison's
    per_unit = "rollout_scores" if study == "guidelines" else "scores"
    scores = _tsv(results / per_unit / "smollm2.tsv")
    assert {"unit", "cluster"} <= set(scores.columns)
    assert scores["cluster"].notna().all()


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_demo_audits_smollm2_for_exposure_and_finds_no_evidence(default_run):
    """The demo's exposure audit (config/config.yaml: Cancer-Myth, every question): SmolLM2
    cannot have seen the synthetic questions, and every probe says so; the stored reference
    answers hold no probe answers, so they are not testable. The report has the page, and no
    headline carries the exposed flag."""
    results = default_run / "results" / "cancer_myth"
    table = _tsv(results / "tables" / "exposure.tsv").set_index(["model", "probe"])
    assert sorted(table.index.get_level_values("probe").unique()) == ["completion", "likelihood"]
    for probe in ("completion", "likelihood"):
        row = table.loc[("smollm2", probe)]
        assert row["verdict"] == "no evidence" and row["n"] == 21, (probe, row.to_dict())
        assert table.loc[("cancer-myth-reference-replay", probe), "verdict"] == "not testable"
    items = _tsv(results / "exposure" / "smollm2.tsv")
    assert len(items) == 2 * 21 and items["score"].notna().all()
    page = default_run / "results" / "report" / "cancer_myth" / "tables" / "exposure.html"
    assert "no evidence" in page.read_text()
    summary = _tsv(default_run / "results" / "summary.tsv")
    assert not summary["warnings"].fillna("").str.contains("exposure audit").any()


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_embedded_model_loads_once_per_wave(default_run):
    # The run's plan of generate jobs (oncoeval.workflow.waves), kept after the run as the last plan
    # (read before `make export`'s run, whose plan has no generate job).
    plan = json.loads((default_run / ".snakemake" / "oncoeval-generate-plan.last.json").read_text())
    smollm2 = plan["models"]["smollm2"]
    # The hf backend logs one "loaded smollm2 in ..." line per load, in the job's log.
    loads = sum(
        path.read_text().count("loaded smollm2 in ")
        for path in default_run.glob("logs/*/generate/smollm2/*.log")
    )
    # 16 request sets (2 of them the exposure audit's), 5 waves (CancerGUIDE's synthetic chain); each set loaded it before.
    assert 1 <= loads <= smollm2["waves"] < len(smollm2["sets"]), (loads, smollm2["waves"])


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_make_export_of_the_demo_run(default_run):
    """`make export` on the demo: an inspect log per study and evaluated model that reads back
    one sample per answered request, Every Eval Ever records its validator accepts, and the
    reporting checklist with its items counted (docs/publishing.md)."""
    import subprocess
    import sys

    from conftest import workflow_env
    from inspect_ai.log import read_eval_log

    from oncoeval.export import checklist

    subprocess.run(
        [sys.executable, "-m", "oncoeval.export", "export"],
        cwd=default_run, env=workflow_env(), check=True, timeout=900,
    )  # fmt: skip
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    expected = {(s, m) for s in STUDIES for m in config["studies"][s]["evaluate"]}
    export = default_run / "results" / "export"
    logs = {(p.parent.name, p.stem): p for p in export.glob("inspect/*/*.eval")}
    assert set(logs) == expected
    for (study, model), path in logs.items():
        answered = default_run / "results" / study / "responses" / model
        n = sum(len(p.read_text().splitlines()) for p in answered.glob("*.jsonl"))
        assert len(read_eval_log(str(path)).samples) == n > 0, path
    proc = subprocess.run(
        [str(REPO / ".venv-tools" / "eee" / "bin" / "python"), "-m",
         "every_eval_ever.validate", "--format", "json", "data/*/*/*/*.json",
         "data/*/*/*/*.jsonl"],
        cwd=export / "eee", capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    assert len(report) == 2 * len(expected) and proc.returncode == 0
    assert [e for f in report for e in f["errors"]] == []
    md = (default_run / "results" / "reporting_checklist.md").read_text()
    rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| ")][2:]
    status = {f"{r[0][2:]} {r[1]}": r[3] for r in rows}
    counts = {s: list(status.values()).count(s) for s in (checklist.FILLED, checklist.PARTLY)}
    # The demo's judges (SmolLM2 as Cancer-Myth verifier, validated against the shipped human
    # scores; the guidelines chooser) and its answers served from the item cache or replayed.
    # MI-CLEAR-LLM 1 (the LLM used, with its query dates) and 3 (prompt wording).
    assert status["MI-CLEAR-LLM 1"] == checklist.PARTLY
    assert status["MI-CLEAR-LLM 3"] == checklist.FILLED
    # TRIPOD-LLM 8b (annotators) is filled by `make review-import`, which the demo does not run
    assert status["TRIPOD-LLM 8b"] == checklist.AUTHORS
    assert counts[checklist.FILLED] + counts[checklist.PARTLY] >= len(status) - 3
    assert f"{counts[checklist.FILLED]} filled, {counts[checklist.PARTLY]} partly filled" in md
