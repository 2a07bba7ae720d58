"""A run directory per config: ``runs/<name>/`` with its own results/, logs/ and report.

Results are written under ``results/`` relative to the working directory, in every rule and
script of the workflow; giving each config its own working directory keeps two configs' runs
apart without a second path scheme. The directory links the workflow's parts (Snakefile, rules,
scripts, config, resources, ...) and the Makefile back to the repository, and links ``cache/``,
so that every run shares one response cache and one model store: an answer paid for in one run
is read from the cache by another, and its cost is reported as such. Inside it, every ``make``
target works as in the repository::

    make workdir RUN=paper            # makes runs/paper/
    make -C runs/paper run CONFIG=config/paper.yaml
    make -C runs/paper report         # runs/paper/results/report.html

    python -m oncoeval.rundir NAME    # makes runs/NAME/ and prints its path
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS = "runs"
# What a run directory links to the repository: the workflow, its data, the package, the
# Makefile and what `make setup` reads, the environment, and the shared cache.
PARTS = (
    "Snakefile", "rules", "scripts", "config", "resources", "envs", "profiles", "report",
    "oncoeval", "Makefile", "requirements.lock", "requirements-embedded.txt", "pyproject.toml",
    ".venv", "cache",
)  # fmt: skip
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def make_rundir(name: str, repo: Path = REPO, runs: Path | None = None, cache=None) -> Path:
    """``runs/<name>/`` (``runs`` defaults to ``repo/runs``) with its links to ``repo`` and
    to ``cache`` (default ``repo/cache``); made once, an existing directory is kept."""
    if not NAME.fullmatch(name or ""):
        raise ValueError(
            f"run name {name!r}: use letters, digits, '.', '_' and '-' (e.g. RUN=paper-gpt4o)"
        )
    path = Path(runs if runs is not None else Path(repo) / RUNS) / name
    path.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        link = path / part
        target = Path(cache) if part == "cache" and cache is not None else Path(repo) / part
        if part == "cache":
            target.mkdir(parents=True, exist_ok=True)
        if not link.exists() and not link.is_symlink() and target.exists():
            link.symlink_to(target.resolve())
    return path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m oncoeval.rundir NAME", file=sys.stderr)
        return 2
    try:
        path = make_rundir(argv[0])
    except ValueError as exc:
        print(f"rundir: {exc}", file=sys.stderr)
        return 2
    print(path.relative_to(REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
