"""The README gets a user to results: short, the two commands first (CI runs its test command),
and every link in it and in docs/ leads somewhere (issue #25 item 1)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
# Markdown links [text](target), skipping images and absolute URLs.
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def doc_pages() -> list:
    docs = sorted((REPO / "docs").glob("**/*.md"))
    return [README, REPO / "CONTRIBUTING.md", REPO / "config" / "README.md", *docs]


def heading_anchors(path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces
    to hyphens), outside fenced code."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    anchors = set()
    for title in re.findall(r"^#+\s+(.*?)\s*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        anchors.add(slug)
    return anchors


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines (at most 200)"
    body = [line for line in lines if line.strip() and not line.startswith("# ")]
    assert body[:4] == ["```bash", "make run", "make test", "```"], body[:4]


def test_ci_runs_the_readmes_test_command_and_make_knows_both():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, flags=re.M), ".ci/run does not call `make test`"
    for target in ("run", "test"):
        done = subprocess.run(
            ["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr


def test_readme_sends_the_details_to_docs_pages_listed_in_the_index():
    readme = README.read_text(encoding="utf-8")
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([\w/-]+\.md)", readme))
    assert {"index.md", "departures.md", "models.md", "cluster.md", "report.md"} <= linked
    listed = set(re.findall(r"\]\(([\w/-]+\.md)\)", index))
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").glob("**/*.md")}
    assert pages - {"index.md"} <= listed, (
        f"docs pages missing from docs/index.md: {pages - listed}"
    )


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in heading_anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_docs_name_the_stages_the_study_contract_names():
    from oncoeval.studies.contract import STAGES

    listed = ", ".join(f"`{stage}`" for stage in STAGES)
    for page in (README, REPO / "docs" / "workflow.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert f"{len(STAGES)} stages" in text.replace("five", "5"), page.name
        assert listed in text, f"{page.name} does not list the contract's stages {STAGES}"
    bullets = re.findall(r"^- \*\*(\w+)\*\*", (REPO / "docs/workflow.md").read_text(), flags=re.M)
    assert bullets == [*STAGES[:2], "generate", *STAGES[2:]], bullets


def test_the_departure_settings_named_in_the_docs_exist():
    """Every setting docs/departures.md lists as a departure is a key of that study's schema."""
    from oncoeval.config.checks import study_schema

    rows = re.findall(
        r"^\| (\w+) \| (`[^|]*`) \|", (REPO / "docs/departures.md").read_text(), flags=re.M
    )
    assert rows
    for study, settings in rows:
        for dotted in re.findall(r"`([\w.]+)`", settings):
            schema = study_schema(study)
            for part in dotted.split("."):
                assert part in schema.get("properties", {}), f"{study}.{dotted} is no setting"
                schema = schema["properties"][part]


# Code in Markdown: fenced blocks and inline spans (prose "make" is no command).
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
MAKE_CALL = re.compile(r"(?<![\w/.-])make\s+(?:-C\s+\S+\s+)?([a-z][\w-]*)")
PYTHON_M = re.compile(r"(\S*python[\d.]*)\s+-m\s+([A-Za-z_][\w.]*)")


def user_pages() -> list:
    """The pages a user reads: the README and docs/."""
    return [README, *sorted((REPO / "docs").glob("**/*.md"))]


def code_in(page) -> list[str]:
    return [m.group(0).strip("`") for m in CODE.finditer(page.read_text(encoding="utf-8"))]


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, flags=re.M))


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_make_command_in_the_docs_is_a_makefile_target(page):
    targets = makefile_targets()
    assert {"run", "report", "estimate", "export", "publish", "test"} <= targets
    named = {t for code in code_in(page) for t in MAKE_CALL.findall(code)}
    assert named <= targets, f"{page.name}: no Makefile target {sorted(named - targets)}"


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_python_m_module_in_the_docs_exists(page):
    import importlib.util

    tools = " ".join(p.read_text() for p in (REPO / "requirements-tools").glob("*.lock"))
    missing = []
    for code in code_in(page):
        for python, module in PYTHON_M.findall(code):
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            # or a validator of the tools' own environments (.venv-tools, `make tools`)
            found = found or module.split(".")[0].replace("_", "-") + "==" in tools
            if not found:
                missing.append(f"{python} -m {module}")
    assert not missing, f"{page.name}: no module for {missing}"


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_docs_run_a_config_through_make_not_bare_snakemake(page):
    """A bare `snakemake --configfile ...` builds no report and leaves `make report` and
    `make export` on the previous config: the docs run a config with `make run CONFIG=...`."""
    bare = [
        code
        for code in code_in(page)
        if re.search(r"(^|\s|/)snakemake\s", code) and "--configfile" in code
    ]
    assert not bare, f"{page.name}: {bare}"


def test_the_troubleshooting_page_gives_every_failure_kinds_cure():
    """docs/troubleshooting.md quotes each cure oncoeval.backends.failures prints (up to its first colon,
    the part that names the failure), and the one for a server that fails every call."""
    from oncoeval.backends import failures

    page = " ".join((REPO / "docs/troubleshooting.md").read_text(encoding="utf-8").split())
    cfg = {"id": "gpt", "backend": "openai", "base_url": "http://127.0.0.1:8000/v1"}
    kinds = [k for k in failures.KINDS if k != failures.REPLAY]  # replay's: below
    said = [failures.cure(kind, cfg) for kind in kinds]
    missing = [cure for cure in said if cure.split(":")[0] not in page]
    assert not missing, missing
    server = failures.server_failing_cure([500], cfg)
    shown = server.replace(cfg["base_url"], "`<base_url>`").replace("500", "`<status>`")
    assert shown.split("(")[0] in page, shown
    assert "add the missing answers to `models[X].path`" in page  # the replay's, keyed by id
