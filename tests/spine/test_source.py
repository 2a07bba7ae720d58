"""The workflow's own files are read from its source wherever the run is; a user's relative
paths from the run's folder (oncoeval.core.source, issue #40)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oncoeval.config import checks as oc
from oncoeval.core import source
from oncoeval.studies import STUDIES, contract
from tests.conftest import REPO, link_workflow

DEMO_FILE = "resources/demo/coral/metadata.tsv"


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A run's folder that is not the source (as a snakedeploy deployment's is)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_source_is_the_checkout_of_the_package():
    assert source.SOURCE == REPO.resolve()
    assert (source.SOURCE / "Snakefile").is_file()


def test_a_missing_resources_path_is_the_workflows_own_file(elsewhere):
    assert source.own_file(DEMO_FILE) == str(REPO / DEMO_FILE)


def test_a_users_own_file_is_read_from_the_run_folder(elsewhere):
    mine = elsewhere / DEMO_FILE
    mine.parent.mkdir(parents=True)
    mine.write_text("profile_id\n")
    assert source.own_file(DEMO_FILE) == DEMO_FILE


@pytest.mark.parametrize(
    "value",
    [
        "data/notes.jsonl",  # a user's relative path, outside resources/
        "resources/demo/coral/no-such-file.tsv",  # neither here nor in the source
        "embedded:smollm2-135m-instruct",
        "coral",
    ],
)
def test_other_values_are_left_as_written(elsewhere, value):
    assert source.own_file(value) == value


def test_an_absolute_path_is_left_as_written(elsewhere):
    assert source.own_file(str(REPO / DEMO_FILE)) == str(REPO / DEMO_FILE)


def test_the_demo_config_points_at_the_source_from_another_folder(elsewhere):
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert oc.schema_problems(config) == []
    oc.fill_workflow_config(config)
    assert oc.config_problems(config) == []
    assert config["studies"]["coral"]["metadata"] == str(REPO / DEMO_FILE)
    replay = next(m for m in config["models"] if m["id"] == "coral-reference-replay")
    assert Path(replay["path"]).is_absolute() and Path(replay["path"]).is_dir()


def test_prompts_are_the_sources_also_beside_a_copy(elsewhere):
    # snakedeploy copies config/ (prompts included) into the run's folder: the workflow still
    # reads its own templates.
    (elsewhere / "config" / "prompts").mkdir(parents=True)
    for study in STUDIES:
        (elsewhere / "config" / "prompts" / study).mkdir()
        assert source.source_file(f"config/prompts/{study}") == str(
            REPO / "config" / "prompts" / study
        )


def test_a_folder_linking_the_source_keeps_relative_paths(tmp_path, monkeypatch):
    # The checkout itself, `make workdir` run folders and the tests' folders link the source:
    # paths stay as the config and the rules write them (so params and provenance keep them).
    monkeypatch.chdir(link_workflow(tmp_path / "run"))
    assert source.source_file("config/prompts/coral") == "config/prompts/coral"
    assert source.own_file(DEMO_FILE) == DEMO_FILE
    assert contract.prompts_dir("coral") == "config/prompts/coral"
