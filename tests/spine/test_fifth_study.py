"""A fifth study is cheap: the test-only toy study (tests/toy_study/) is added to a copy of the
workflow by writing its own files and one registry line, then runs every stage from prepare to
aggregate through the real `generate` rule (replayed answers), its judge role included, and shows
in the summary and the report like the four studies. Its data file, judge role and captions are
its own declarations (its workflow.py), which the config checks and the report read as they read
the four studies'; the demo config, which does not name it, still builds."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import (
    REPO,
    WORKFLOW_PARTS,
    dry_run_jobs,
    other_studies_off,
    run_snakemake,
    workflow_env,
    write_config,
)

TOY = REPO / "tests" / "toy_study"
# The toy study's own files, at the paths they would have in the repository.
TOY_PARTS = ("oncoeval", "rules", "scripts", "config", "tests")
REGISTRY = "oncoeval/studies/__init__.py"
CONFIG = {
    "models": [
        {"id": "toy-good", "backend": "replay", "path": str(TOY / "data/replay/good")},
        {"id": "toy-sloppy", "backend": "replay", "path": str(TOY / "data/replay/sloppy")},
        {"id": "toy-referee", "backend": "replay", "path": str(TOY / "data/replay/referee")},
    ],
    "evaluate": ["toy-good", "toy-sloppy"],
    "studies": {
        **other_studies_off("toy"),
        "toy": {
            "enabled": True,
            "questions": str(TOY / "data/questions.jsonl"),
            "judges": {"referee": "toy-referee"},
            "referee_agreement": True,
        },
    },
}


def workflow_with_toy(path: Path) -> Path:
    """A copy of the workflow (package included), the toy's files laid over it, and "toy" added
    to the registry."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in (
        *WORKFLOW_PARTS,
        "oncoeval",
        "tests/conftest.py",
        "tests/spine/test_study_contract.py",
    ):
        src = REPO / part
        (path / part).parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, path / part, ignore=ignore)
        elif src.exists():
            shutil.copy(src, path / part)
    for part in TOY_PARTS:
        for src in sorted((TOY / part).rglob("*")):
            dest = path / src.relative_to(TOY)
            if src.is_file() and "__pycache__" not in src.parts:
                assert not dest.exists(), f"the toy study overwrites {dest}"
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(src, dest)
    registry = path / REGISTRY
    text = registry.read_text(encoding="utf-8")
    registry.write_text(text.replace('"guidelines")', '"guidelines", "toy")'), encoding="utf-8")
    return path


def test_the_toy_study_keeps_the_contract_and_passes_its_own_tests(tmp_path):
    """The contract tests (tests/spine/test_study_contract.py) and the toy's own tests
    (tests/toy/), run in the copy where "toy" is registered."""
    workdir = workflow_with_toy(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "toy",
            "tests/spine/test_study_contract.py",
            "tests/toy",
        ],
        cwd=workdir,
        env=workflow_env({"PYTHONPATH": str(workdir)}),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # four contract tests of the toy, five of its own
    assert "9 passed" in proc.stdout, proc.stdout[-2000:]


def changed_existing_files(path: Path) -> list[str]:
    """Files of the repository whose copy under ``path`` differs."""
    changed = []
    for part in (*WORKFLOW_PARTS, "oncoeval"):
        src = REPO / part
        files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for f in files:
            if "__pycache__" in f.parts:
                continue
            rel = f.relative_to(REPO)
            if not filecmp.cmp(f, path / rel, shallow=False):
                changed.append(str(rel))
    return changed


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    workdir = workflow_with_toy(tmp_path_factory.mktemp("toy-run"))
    config = write_config(workdir, CONFIG, demo=False)
    # The copy's package, with the toy registered, is the one the workflow and its jobs import.
    env = {"PYTHONPATH": str(workdir)}
    jobs = dry_run_jobs(workdir, configfile=config, env=env)
    run_snakemake(workdir, configfile=config, env=env)
    run_snakemake(workdir, "--report", "results/report.html", configfile=config, env=env)
    return workdir, jobs


def test_the_toy_study_touches_only_the_registry(tmp_path):
    workdir = workflow_with_toy(tmp_path)
    assert changed_existing_files(workdir) == [REGISTRY]


@pytest.mark.slow
def test_every_stage_runs_through_generate(toy_run):
    _, jobs = toy_run
    stages = {rule: n for rule, n in jobs.items() if rule.startswith("toy_") or rule == "generate"}
    # one prepare and request set; per model one generate job, one parse and one score; the
    # referee (the toy's judge role) answers the same set and is parsed, but not scored
    assert stages == {
        "toy_prepare": 1,
        "toy_requests": 1,
        "generate": 3,
        "toy_parse": 3,
        "toy_score": 2,
        "toy_aggregate": 1,
        "toy_referee_agreement": 1,
    }
    workdir, _ = toy_run
    for model in ("toy-good", "toy-sloppy", "toy-referee"):
        assert (workdir / f"results/toy/responses/{model}/ask.jsonl").exists()
        assert (workdir / f"benchmarks/toy/generate/{model}/ask.tsv").exists()


@pytest.mark.slow
def test_accuracy_counts_the_unparseable_answer_as_unscored(toy_run):
    workdir, _ = toy_run
    table = pd.read_csv(workdir / "results/toy/tables/accuracy.tsv", sep="\t").set_index("model")
    # good: 4 of 4 right. sloppy: "The answer is 5." right, "4" wrong, "twelve" unparseable,
    # "10" right -> 2 of 3 scored right, 1 unscored.
    assert table.loc["toy-good", ["n", "n_unscored", "accuracy"]].tolist() == [4, 0, 1.0]
    assert table.loc["toy-sloppy", ["n", "n_unscored"]].tolist() == [3, 1]
    assert table.loc["toy-sloppy", "accuracy"] == pytest.approx(2 / 3)
    assert (workdir / "results/toy/figures/accuracy.png").stat().st_size > 0


@pytest.mark.slow
def test_the_judge_role_answers_through_generate_and_fills_its_table(toy_run):
    workdir, _ = toy_run
    table = pd.read_csv(workdir / "results/toy/tables/referee_agreement.tsv", sep="\t")
    table = table.set_index("model")
    # referee: 5, 4, 12, 9. good (5, 3, 12, 10): q1 and q3 the same, 2 of 4. sloppy (5, 4,
    # "twelve", 10): q3 unparseable, q1 and q2 the same, 2 of 3.
    assert table.loc["toy-good", ["n", "n_same"]].tolist() == [4, 2]
    assert table.loc["toy-sloppy", ["n", "n_same"]].tolist() == [3, 2]


@pytest.mark.slow
def test_the_toy_study_is_in_the_summary_and_the_report(toy_run):
    workdir, _ = toy_run
    summary = pd.read_csv(workdir / "results/summary.tsv", sep="\t")
    toy = summary[summary["study"] == "toy"].set_index("model")
    assert toy["measure"].tolist() == ["accuracy", "accuracy"]
    assert toy.loc["toy-good", "value"] == 1.0
    assert toy.loc["toy-sloppy", ["n", "n_unscored"]].tolist() == [3, 1]
    pages = ("tables/accuracy.html", "figures/accuracy.png", "tables/model_calls.html")
    pages += ("scores/toy-sloppy.html", "drilldown/toy-good.html", "drilldown/toy-sloppy.html")
    for page in pages:
        assert (workdir / "results/report/toy" / page).exists(), page
    html = (workdir / "results/report.html").read_text(encoding="utf-8")
    # Its own category, numbered after the four studies, with the run's category last.
    assert "6 Toy (arithmetic questions, tests only)" in html
    assert "7 Run" in html
    # Its own captions and resampling units, declared in its workflow.py.
    assert "Share of arithmetic questions answered right, per model." in html
    assert "How often each model gives the referee model&#x27;s number." in html or (
        "How often each model gives the referee model's number." in html
    )
    # Its unit "none (counts of equal answers)" becomes the caption's interval sentence.
    assert "No intervals (counts of equal answers)." in html


def failed_dry_run(workdir: Path, config: dict) -> str:
    """The output of a dry run of ``config`` in ``workdir``, which must fail."""
    proc = run_snakemake(
        workdir,
        "-n",
        configfile=write_config(workdir, config, demo=False),
        check=False,
        env={"PYTHONPATH": str(workdir)},
    )
    assert proc.returncode != 0, proc.stdout[-2000:]
    return proc.stdout + proc.stderr


def test_the_config_checks_read_the_toys_data_file_and_judge_role(tmp_path):
    workdir = workflow_with_toy(tmp_path)
    toy = {**CONFIG["studies"]["toy"], "questions": str(tmp_path / "absent.jsonl")}
    toy["judges"] = {"referee": None}
    out = failed_dry_run(workdir, {**CONFIG, "studies": {**CONFIG["studies"], "toy": toy}})
    assert f"studies.toy.questions: '{tmp_path / 'absent.jsonl'}': no such file" in out
    assert "studies.toy.judges.referee: needs a model id (referee_agreement is true)" in out
    # A referee is routed like any judge: one that may not see PHI is refused.
    toy = {**CONFIG["studies"]["toy"], "contains_phi": True}
    models = [{**m, "phi_safe": m["id"] != "toy-referee"} for m in CONFIG["models"]]
    config = {**CONFIG, "models": models, "studies": {**CONFIG["studies"], "toy": toy}}
    out = failed_dry_run(workdir, config)
    assert "studies.toy.judges.referee: 'toy-referee' (referee) is not phi_safe" in out


def test_the_demo_config_which_does_not_name_the_toy_still_builds(tmp_path):
    workdir = workflow_with_toy(tmp_path)
    jobs = dry_run_jobs(workdir, env={"PYTHONPATH": str(workdir)})
    assert jobs and not any(rule.startswith("toy_") for rule in jobs), jobs


@pytest.mark.slow
def test_the_toy_studys_models_are_compared_by_the_generic_rule(toy_run):
    """The contract's unit_scores is all a study writes for its comparison (rules/compare.smk)."""
    workdir, _ = toy_run
    tables = workdir / "results/toy/tables"
    row = pd.read_csv(tables / "model_comparison.tsv", sep="\t").iloc[0]
    # shared scored questions: the sloppy model's unparseable one is left out
    assert (row["model_a"], row["model_b"], row["n_units"]) == ("toy-good", "toy-sloppy", 3)
    assert row["diff"] == pytest.approx(1 / 3)  # 3 of 3 right against 2 of 3
    # one discordant pair: exact McNemar p = 1, so the sloppy model cannot be told apart
    assert row["test"].startswith("exact McNemar") and row["p_value"] == 1.0
    assert row["verdict"] == "not separable at this n"
    board = pd.read_csv(tables / "leaderboard.tsv", sep="\t").set_index("model")
    assert board["best"].unique().tolist() == ["toy-good"]
    assert board.loc["toy-sloppy", "standing"] == "not separable from the leader at this n"
    # 3 shared questions: 2 / 2^3 > 0.05, so the mdd says no difference can be significant
    assert board.loc["toy-sloppy", "mdd"].startswith("no difference can be significant with 3")
    assert (board.loc["toy-sloppy", "n_units"], board.loc["toy-sloppy", "n_unscored"]) == (3, 1)
    assert (workdir / "results/report/toy/tables/leaderboard.html").exists()
