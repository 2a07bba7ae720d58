"""Runs do not overwrite each other: each config in its own run directory (oncoeval.rundir),
with its own results and report, the response cache shared (issue #27, item 6)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from conftest import REPO, other_studies_off, run_snakemake, workflow_env, write_config

from oncoeval.rundir import PARTS, make_rundir

SIDE_EFFECTS = {
    "evaluate": [],
    "studies": {
        **other_studies_off("side_effects"),
        "side_effects": {
            "enabled": True,
            "evaluate": ["side-effects-reference-replay"],
            "matcher": {"method": "lexical"},
        },
    },
}
GUIDELINES = {
    "evaluate": [],
    "studies": {
        **other_studies_off("guidelines"),
        "guidelines": {
            "enabled": True,
            "evaluate": ["demo-oracle-replay"],
            "judges": {"generator": None, "chooser": None},
        },
    },
}


def test_a_run_directory_links_the_workflow_and_refuses_a_bad_name(tmp_path):
    path = make_rundir("paper", REPO, runs=tmp_path / "runs", cache=tmp_path / "cache")
    assert path == tmp_path / "runs" / "paper"
    for part in ("Snakefile", "rules", "config", "resources", "Makefile"):
        assert (path / part).resolve() == (REPO / part).resolve()
    assert (path / "cache").resolve() == (tmp_path / "cache").resolve()
    assert set(PARTS) >= {"Snakefile", "cache", "Makefile"}
    assert make_rundir("paper", REPO, runs=tmp_path / "runs") == path  # made once, kept
    proc = subprocess.run(
        [sys.executable, "-m", "oncoeval.rundir", "../elsewhere"],
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
