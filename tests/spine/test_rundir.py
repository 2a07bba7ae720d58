"""Runs do not overwrite each other: each config in its own run directory (oncoeval.workflow.rundir),
with its own results and report, the response cache shared (issue #27, item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, dry_run_jobs, link_workflow, run_snakemake, workflow_env, write_config
from helpers import MAKE, replayed, run_make

from oncoeval.workflow.rundir import PARTS, copy_config, make_rundir

SIDE_EFFECTS = replayed("side_effects")
GUIDELINES = replayed("guidelines", guidelines={"evaluate": ["demo-oracle-replay"]})


def test_a_run_directory_links_the_workflow_and_refuses_a_bad_name(tmp_path):
    path = make_rundir("paper", REPO, runs=tmp_path / "runs", cache=tmp_path / "cache")
    assert path == tmp_path / "runs" / "paper"
    for part in ("Snakefile", "rules", "config", "resources", "Makefile"):
        assert (path / part).resolve() == (REPO / part).resolve()
    assert (path / "cache").resolve() == (tmp_path / "cache").resolve()
    assert set(PARTS) >= {"Snakefile", "cache", "Makefile"}
    assert make_rundir("paper", REPO, runs=tmp_path / "runs") == path  # made once, kept
    proc = subprocess.run(
        [sys.executable, "-m", "oncoeval.workflow.rundir", "../elsewhere"],
        capture_output=True, text=True, env=workflow_env(),
    )  # fmt: skip
    assert proc.returncode == 2 and "run name '../elsewhere'" in proc.stderr


@pytest.mark.slow
def test_two_configs_run_side_by_side_each_with_its_own_results(tmp_path):
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    first = make_rundir("side-effects", REPO, runs=runs, cache=cache)
    second = make_rundir("guidelines", REPO, runs=runs, cache=cache)
    for path, config in ((first, SIDE_EFFECTS), (second, GUIDELINES)):
        run_snakemake(path, "--config", "limit=2", configfile=write_config(path, config))
    one = pd.read_csv(first / "results" / "summary.tsv", sep="\t")
    two = pd.read_csv(second / "results" / "summary.tsv", sep="\t")
    # The second run did not touch the first one's results: each summary is its own config's.
    assert set(one["study"]) == {"side_effects"} and set(two["study"]) == {"guidelines"}
    assert not (first / "results" / "guidelines").exists()
    usage = pd.read_csv(first / "results" / "usage.tsv", sep="\t")
    assert usage["model"].tolist() == ["side-effects-reference-replay"]
    assert {"spent_usd", "cached_usd"} <= set(usage.columns)


def test_workdir_copies_the_config_with_data_paths_of_its_own_folder(tmp_path):
    """`make workdir RUN=name CONFIG=path`: the copy's relative data paths are resolved against
    the config file's folder, so that the run directory's config check finds the data."""
    group = tmp_path / "group"
    (group / "data").mkdir(parents=True)
    questions = REPO / "resources/demo/cancer_myth/questions.json"
    (group / "data" / "questions.json").write_text(questions.read_text())
    own = {
        "models": [
            {
                "id": "ref",
                "backend": "replay",
                "path": "resources/demo/cancer_myth/replay/reference",
            },
            {
                "id": "verdicts",
                "backend": "replay",
                "path": "resources/demo/cancer_myth/replay/verdicts",
            },
        ],
        "evaluate": ["ref"],
        "studies": {
            "cancer_myth": {
                "enabled": True,
                "questions": "data/questions.json",
                "judges": {"verifier": "verdicts"},
            }
        },
    }
    (group / "mine.yaml").write_text(yaml.safe_dump(own, sort_keys=False))
    path = make_rundir("mine", REPO, runs=tmp_path / "runs", cache=tmp_path / "cache")
    copied = copy_config(group / "mine.yaml", path)
    assert copied == path / "mine.yaml"
    config = yaml.safe_load(copied.read_text())
    assert config["studies"]["cancer_myth"]["questions"] == str(group / "data/questions.json")
    # Found only in the repository (linked into the run directory): kept as written.
    assert config["models"][0]["path"] == "resources/demo/cancer_myth/replay/reference"
    jobs = dry_run_jobs(path, "--config", "limit=2", configfile=Path(copied.name))
    assert jobs.get("generate", 0) >= 1, jobs  # the config check found the data


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_a_failed_make_run_says_the_report_was_not_updated_and_report_names_its_config(tmp_path):
    workdir = link_workflow(tmp_path / "run")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"evaluate": ["nobody"]}))

    proc = run_make(workdir, "run", f"CONFIG={bad}", timeout=600)
    assert proc.returncode != 0
    assert "the report (results/report.html) was not updated" in proc.stdout
    # The last run's config, read from results/.config.
    proc = run_make(workdir, "report", timeout=600)
    assert f"Config: {bad}" in proc.stdout
    assert proc.returncode != 0  # nothing of that config was run
