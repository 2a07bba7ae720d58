"""A release deployed the Snakemake way (issue #40): `snakedeploy deploy-workflow` of a tagged
clone into an empty folder, then `snakemake` there, with the workflow used as a module.

The folder holds only what snakedeploy writes (config/, profiles/, workflow/Snakefile, LICENSE);
the demo data, prompts and the oncoeval package are read from the clone. PYTHONPATH names
another `oncoeval` package (one that refuses to import), as an older installed version would:
the run must import the clone's own.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import oncoeval
from tests.conftest import REPO, dry_run_jobs, run_snakemake

pytestmark = pytest.mark.slow

TAG = f"v{oncoeval.__version__}"
SNAKEDEPLOY = Path(sys.executable).parent / "snakedeploy"
# What snakedeploy 0.17.1's local provider writes as the module's snakefile: a path Snakemake
# reads relative to the deployed workflow/ folder, i.e. the deploying Snakefile itself (a GitHub
# deployment writes `github("owner/repo", path="Snakefile", tag=...)` instead). The README's
# recipe points it at the clone, as this test does.
LOCAL_MODULE_SNAKEFILE = '"Snakefile"'
# One study end to end on replayed answers (no model is loaded): CORAL's replayed gold tuples.
STUDY, REPLAY = "coral", "coral-reference-replay"
LIMIT = 3


def git(*args: str, cwd: Path) -> str:
    identity = ["-c", "user.name=OncoEval test", "-c", "user.email=test@example.org"]
    proc = subprocess.run(
        ["git", *identity, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return proc.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The working tree as a tagged release (its files, tracked and new but not ignored,
    committed in a fresh repository and tagged), cloned at the tag as a user clones a release."""
    root = tmp_path_factory.mktemp("release")
    origin = root / "origin"
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    for rel in filter(None, listed.split("\0")):
        source = REPO / rel
        if source.is_file():  # a deleted but still tracked file is not part of the tree
            (origin / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, origin / rel, follow_symlinks=False)
    git("init", "-q", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-q", "-m", "release", cwd=origin)
    git("tag", TAG, cwd=origin)
    # Named as the README names it (a folder name that is no module name: see `deployed`).
    clone = root / f"oncoeval-{oncoeval.__version__}"
    git("clone", "-q", "--branch", TAG, str(origin), str(clone), cwd=root)
    return clone


@pytest.fixture(scope="module")
def deployed(clone, tmp_path_factory) -> Path:
    """An empty folder after `snakedeploy deploy-workflow <clone> <folder> --tag <tag> --name
    oncoeval` (the README's recipe), its module pointed at the clone's Snakefile."""
    dest = tmp_path_factory.mktemp("my-eval")
    subprocess.run(
        [
            str(SNAKEDEPLOY),
            "deploy-workflow",
            str(clone),
            str(dest),
            "--tag",
            TAG,
            "--name",
            "oncoeval",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    snakefile = dest / "workflow" / "Snakefile"
    text = snakefile.read_text()
    assert text.count(LOCAL_MODULE_SNAKEFILE) == 1, text
    snakefile.write_text(text.replace(LOCAL_MODULE_SNAKEFILE, f'"{clone / "Snakefile"}"'))
    return dest


@pytest.fixture(scope="module")
def other_oncoeval(tmp_path_factory) -> dict:
    """An environment whose PYTHONPATH offers an `oncoeval` other than the release's."""
    folder = tmp_path_factory.mktemp("other")
    (folder / "oncoeval").mkdir()
    (folder / "oncoeval" / "__init__.py").write_text(
        "raise ImportError('this is not the deployed release of oncoeval')\n"
    )
    return {"PYTHONPATH": str(folder)}


def test_deployed_folder_holds_only_what_snakedeploy_wrote(deployed):
    assert sorted(p.name for p in deployed.iterdir()) == [
        "LICENSE",
        "config",
        "profiles",
        "workflow",
    ]
    assert (deployed / "profiles" / "default" / "profile.yaml").is_file()


def test_dry_run_of_the_deployed_demo_config(deployed, other_oncoeval):
    jobs = dry_run_jobs(deployed, env=other_oncoeval)
    from oncoeval.studies import STUDIES

    assert {f"{study}_prepare" for study in STUDIES} <= set(jobs), jobs
    assert jobs.get("generate", 0) > 0


def test_one_study_end_to_end_in_the_deployed_folder(deployed, clone, other_oncoeval):
    run_snakemake(
        deployed,
        f"{STUDY}_aggregate",
        "--config",
        f"only={STUDY},{REPLAY}",
        f"limit={LIMIT}",
        env=other_oncoeval,
    )
    # Results are the user's folder's; nothing is written into the clone.
    assert not (clone / "results").exists()
    with open(deployed / "results" / STUDY / "tables" / "overall.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert {row["model"] for row in rows} == {REPLAY}
    published = next(row for row in rows if row["view"] == "published")
    # The demo notes came from the clone (limit=3 of them), and the replayed gold tuples match
    # the gold, so every published score is 1.
    assert int(published["n_notes"]) == LIMIT
    assert int(published["parse_failures"]) == 0
    assert float(published["bleu4"]) == float(published["em_f1"]) == 1.0
