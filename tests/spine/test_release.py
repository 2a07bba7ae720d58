"""A release's metadata agrees (issue #40): the version is written once (oncoeval/__init__.py),
pyproject.toml reads it from there, CITATION.cff and the changelog's latest entry name it with
the same date, and the workflow catalog's file says how the workflow is run."""

from __future__ import annotations

import re
import tomllib

import yaml

import oncoeval
from tests.conftest import REPO

# A changelog entry's heading: `## 0.1.0 (2026-11-26)`.
ENTRY = re.compile(r"^## (\S+) \((\d{4}-\d{2}-\d{2})\)$", re.MULTILINE)


def test_pyproject_takes_the_version_from_the_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "oncoeval.__version__"}


def test_citation_and_changelog_name_the_packages_version():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    entries = ENTRY.findall((REPO / "CHANGELOG.md").read_text())
    assert entries, "CHANGELOG.md: no `## <version> (<date>)` entry"
    latest_version, latest_date = entries[0]
    assert citation["version"] == latest_version == oncoeval.__version__
    assert str(citation["date-released"]) == latest_date


def test_catalog_file_names_usage_software_stack_and_report():
    usage = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"}
    stack = usage["software-stack-deployment"]
    assert any(stack.values())
    # Every deployment method it claims has its files in the repository.
    if stack.get("conda"):
        assert sorted((REPO / "envs").glob("*.yaml"))
    assert usage["report"] is True
    assert (REPO / "config" / "README.md").is_file()
