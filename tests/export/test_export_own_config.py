"""`make export` and `make publish` of a run of a user's own config (not the demo's): the config
is read as the workflow reads it (the demo's config/config.yaml is not layered under it), the
logs, the checklist and the crate are the run's own, and a config file outside the run
directory is copied into the crate. A study whose evaluated models have no results is an error,
not an export of 0 logs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from conftest import link_workflow, run_snakemake, workflow_env

from oncoeval.export import crate, run

pytestmark = pytest.mark.slow

MODEL = "cancer-myth-reference-replay"
OWN = {
    "models": [
        {"id": MODEL, "backend": "replay", "path": "resources/demo/cancer_myth/replay/reference"},
        {
            "id": "stored-verdicts",
            "backend": "replay",
            "path": "resources/demo/cancer_myth/replay/verdicts",
        },
    ],
    "evaluate": [MODEL],
    "studies": {
        "cancer_myth": {
            "enabled": True,
            "questions": "resources/demo/cancer_myth/questions.json",
            "judges": {"verifier": "stored-verdicts"},
        }
    },
}


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    """A finished run of the own config, which lies outside the run directory."""
    outside = tmp_path_factory.mktemp("configs") / "group.yaml"
    outside.write_text(yaml.safe_dump(OWN, sort_keys=False))
    workdir = link_workflow(tmp_path_factory.mktemp("own-run"))
    run_snakemake(workdir, "--config", "limit=3", configfile=outside)
    return workdir, outside


def publish(workdir, configfile: str) -> subprocess.CompletedProcess:
    """`make publish` as the Makefile runs it (the last run's config and arguments)."""
    return subprocess.run(
        [sys.executable, "-m", "oncoeval.export", "publish", f"--configfile={configfile}"]
        + ["--config", "limit=3"],
        cwd=workdir,
        env=workflow_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_own_config_is_read_without_the_demo_under_it(own_run):
    workdir, outside = own_run
    config = run.load_config(workdir, [str(outside)])
    assert config["studies"]["cancer_myth"]["evaluate"] in (None, [], [MODEL])
    assert {m["id"] for m in config["models"]} == {MODEL, "stored-verdicts"}
    assert not config["studies"]["coral"]["enabled"]
    # Without a config file the workflow (and the export) reads the demo's.
    assert "smollm2" in {m["id"] for m in run.load_config(workdir, [])["models"]}


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_publish_of_an_own_config_names_the_run_and_carries_its_config(own_run, where):
    workdir, outside = own_run
    if where == "inside":
        (workdir / "group.yaml").write_text(outside.read_text())
        configfile, in_crate = "group.yaml", "group.yaml"
    else:
        configfile, in_crate = str(outside), "run-config/group.yaml"
    proc = publish(workdir, configfile)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Config: {configfile}" in proc.stdout

    logs = sorted((workdir / "results/export/inspect").rglob("*.eval"))
    assert [p.relative_to(workdir / "results/export/inspect").as_posix() for p in logs] == [
        f"cancer_myth/{MODEL}.eval"
    ]
    checklist = (workdir / "results/reporting_checklist.md").read_text()
    assert MODEL in checklist and "smollm2" not in checklist
    assert f"Config: {configfile}." in checklist

    crate = workdir / "results/publish/crate"
    assert (crate / in_crate).read_text() == outside.read_text()
    metadata = json.loads((crate / "ro-crate-metadata.json").read_text())
    root = next(e for e in metadata["@graph"] if e["@id"] == "./")
    assert root["name"] == "OncoEval workflow run (group.yaml)"
    assert f"cancer_myth: {MODEL}" in root["description"]
    assert "resources/demo/cancer_myth/questions.json" in root["description"]
    assert "smollm2" not in root["description"]
    action = next(e for e in metadata["@graph"] if e.get("@type") == "CreateAction")
    assert {"@id": in_crate} in action["object"]


def test_a_study_without_results_of_its_models_is_an_error(own_run, tmp_path):
    workdir, _ = own_run
    # A model of the config that this run did not evaluate.
    spare = {
        "id": "not-run",
        "backend": "replay",
        "path": "resources/demo/cancer_myth/replay/reference",
    }
    other = {**OWN, "models": [*OWN["models"], spare], "evaluate": ["not-run"]}
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump(other))
    proc = subprocess.run(
        [sys.executable, "-m", "oncoeval.export", f"--configfile={path}"],
        cwd=workdir,
        env=workflow_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "cancer_myth (no results/cancer_myth/responses/ of not-run)" in proc.stderr
    assert "run the workflow with this config first" in proc.stderr


def test_a_config_lies_in_the_crate_where_the_run_directory_has_it(tmp_path):
    """A config under the run directory keeps its path, also through a linked config/ folder
    (run directories and tests link it); one outside goes to run-config/."""
    workdir = link_workflow(tmp_path / "run")
    assert crate.config_destination(workdir, "config/config.yaml") == "config/config.yaml"
    assert crate.config_destination(workdir, str(workdir / "mine.yaml")) == "mine.yaml"
    assert crate.config_destination(workdir, "../group.yaml") == "run-config/group.yaml"
    assert crate.config_destination(workdir, str(tmp_path / "g.yaml")) == "run-config/g.yaml"
