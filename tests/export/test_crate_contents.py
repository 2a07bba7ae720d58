"""The crate ships the run and nothing else, written whole or not at all (issue #36, item 3).

A small checkout of the workflow (a git repository, the demo config tracked) with files beside
it that are not the run's: a key file and another team's config under config/, the results of a
study this run does not enable. No workflow run is needed: `crate.build` and `run.publish` read
what lies in the folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

from oncoeval.config import checks as oc
from oncoeval.export import crate, run

SECRET = "sk-planted-" + "9f" * 16


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path) -> tuple[Path, dict]:
    root = tmp_path / "checkout"
    (root / "config").mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    shutil.copy(REPO / "config" / "config.yaml", root / "config" / "config.yaml")
    (root / "config" / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    (root / "config" / "team-b.yaml").write_text("models: []\n")
    (root / "my-run.yaml").write_text("limit: 2\n")
    results = root / "results"
    files = {
        "provenance.json": "{}",
        "side_effects/tables/lists.tsv": "a\n1\n",
        "report/side_effects/tables/lists.html": "<p>1</p>",
        "guidelines/tables/paths.tsv": "b\n2\n",  # another run's study
        "report/guidelines/tables/paths.html": "<p>2</p>",
        "side_effects/.notes/x.txt": SECRET,
    }
    for rel, text in files.items():
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        (results / rel).write_text(text)
    # The run answered with its models (an export of a study with no answers is refused).
    for mid in ("smollm2", "side-effects-reference-replay"):
        (results / "side_effects" / "responses" / mid).mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "add", "Snakefile", "config/config.yaml")
    config = run.load_config(REPO, [])
    for study in oc.STUDIES:
        config["studies"][study]["enabled"] = study == "side_effects"
    return root, config


def _shipped(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_crate_ships_tracked_config_and_the_runs_own_results(checkout, tmp_path):
    root, config = checkout
    out = tmp_path / "crate"
    crate.build(root, config, ["config/config.yaml", "my-run.yaml"], out)
    shipped = _shipped(out)
    assert {"config/config.yaml", "my-run.yaml", "results/provenance.json"} <= shipped
    assert {"results/side_effects/tables/lists.tsv"} <= shipped
    assert "results/report/side_effects/tables/lists.html" in shipped
    for left_out in (
        "config/.env",
        "config/team-b.yaml",
        "results/guidelines/tables/paths.tsv",
        "results/report/guidelines/tables/paths.html",
        "results/side_effects/.notes/x.txt",
    ):
        assert left_out not in shipped
    assert not any(SECRET in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_without_git_the_crate_ships_config_files_but_no_dotfile(checkout, tmp_path):
    root, config = checkout
    shutil.rmtree(root / ".git")
    out = tmp_path / "crate"
    crate.build(root, config, ["config/config.yaml"], out)
    shipped = _shipped(out)
    assert "config/team-b.yaml" in shipped and "config/.env" not in shipped


def test_a_cache_or_model_store_inside_results_is_refused_at_the_config_check(tmp_path):
    problems = oc.store_problems({"cache_dir": "results/cache", "model_store": "cache/models"})
    (problem,) = problems
    assert problem.startswith("cache_dir: 'results/cache' lies inside results/")
    (problem,) = oc.store_problems({"cache_dir": "c", "model_store": "./results/models"})
    assert problem.startswith("model_store:")


class Killed(BaseException):
    """A kill at a chosen point (KeyboardInterrupt's kind: not an Exception)."""


def test_a_publish_killed_while_zipping_leaves_no_broken_zip(checkout, monkeypatch):
    root, config = checkout
    zipped = run.publish(root, config, [])
    assert zipfile.ZipFile(zipped).testzip() is None

    def half_written(base_name, fmt, root_dir):
        Path(f"{base_name}.zip").write_bytes(b"PK\x03\x04 half a zip")
        raise Killed

    monkeypatch.setattr(run.shutil, "make_archive", half_written)
    with pytest.raises(Killed):
        run.publish(root, config, [])
    publish = root / "results" / "publish"
    # The previous zip went first (never stale beside the new export); nothing half-written
    # carries a final name: the crate folder there is this export's, whole.
    assert not zipped.exists()
    assert (publish / "crate" / "ro-crate-metadata.json").is_file()
    monkeypatch.undo()
    zipped = run.publish(root, config, [])  # the next publish clears the leftovers
    assert zipfile.ZipFile(zipped).testzip() is None
    assert sorted(p.name for p in publish.iterdir()) == ["crate", "oncoeval-run-crate.zip"]


def test_an_export_killed_halfway_leaves_the_previous_export_whole(checkout, monkeypatch):
    root, config = checkout
    run.export(root, config)
    export = root / "results" / "export"
    (export / "previous.json").write_text(json.dumps({"complete": True}))

    def killed_halfway(root_, config_, prov, out):
        (out / "eee").mkdir(parents=True)
        (out / "eee" / "partial.json").write_text("{")
        raise Killed

    monkeypatch.setattr(run, "_export", killed_halfway)
    with pytest.raises(Killed):
        run.export(root, config)
    assert (export / "previous.json").exists() and not (export / "eee" / "partial.json").exists()
    assert [p.name for p in export.parent.iterdir() if p.name.startswith(".export")] == []
