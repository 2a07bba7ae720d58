"""A run directory per config: ``runs/<name>/`` with its own results/, logs/ and report.

Results are written under ``results/`` relative to the working directory, in every rule and
script of the workflow; giving each config its own working directory keeps two configs' runs
apart without a second path scheme. The directory links the workflow's parts (Snakefile, rules,
scripts, config, resources, ...) and the Makefile back to the repository, and links ``cache/``,
so that every run shares one response cache and one model store: an answer paid for in one run
is read from the cache by another, and its cost is reported as such. Inside it, every ``make``
target works as in the repository::

    make workdir RUN=paper CONFIG=my/paper.yaml   # makes runs/paper/ with paper.yaml in it
    make -C runs/paper run CONFIG=paper.yaml
    make -C runs/paper report                     # runs/paper/results/report.html

    python -m oncoeval.workflow.rundir NAME [CONFIG]       # makes runs/NAME/ and prints its path

A config given is copied into the directory, its relative data paths (the studies' data keys,
the ad-hoc request files, the models' local paths) resolved against the config file's own
folder, where they are meant: the run directory holds none of the user's data.
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import yaml

from ..config import checks as oc
from ..studies import contract

REPO = Path(__file__).resolve().parents[2]
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


def _data_paths(config: dict):
    """(container, key) of every data path a config sets: each enabled or disabled study's data
    keys (dotted in its block), each ad-hoc request file, each model's ``path``."""
    filled = copy.deepcopy(config)
    try:
        oc.fill_workflow_config(filled)
    except Exception:  # a config the run's check will report; its own keys are still resolved
        filled = config
    for study, block in (config.get("studies") or {}).items():
        if study not in oc.STUDIES or not isinstance(block, dict):
            continue
        full = (filled.get("studies") or {}).get(study) or block
        for dotted in contract.data_keys(study, full):
            *parents, key = dotted.split(".")
            holder = block
            for part in parents:
                holder = holder.get(part) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and key in holder:
                yield holder, key
    if isinstance(config.get("adhoc"), dict):
        yield from ((config["adhoc"], name) for name in config["adhoc"])
    for model in config.get("models") or []:
        if isinstance(model, dict) and "path" in model:
            yield model, "path"


def resolve_data_paths(config: dict, base: Path) -> list[str]:
    """Make ``config``'s relative data paths absolute against ``base`` (in place) where the
    file is there (a path found only elsewhere, e.g. the repository's resources/ that a run
    directory links, or a hub id, is kept); the paths rewritten."""
    rewritten = []
    for holder, key in _data_paths(config):
        value = holder[key]
        if not isinstance(value, str) or not value or Path(value).is_absolute():
            continue
        candidate = (base / value).resolve()
        if candidate.exists():
            holder[key] = str(candidate)
            rewritten.append(value)
    return rewritten


def copy_config(config_file, rundir: Path) -> Path:
    """Copy ``config_file`` into ``rundir`` (as its own name), its relative data paths resolved
    against its folder; the copy's path."""
    source = Path(config_file)
    if not source.is_file():
        raise ValueError(f"CONFIG={config_file}: no such file")
    config = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    if not isinstance(config, dict):
        raise ValueError(f"CONFIG={config_file}: not a YAML mapping")
    resolve_data_paths(config, source.resolve().parent)
    dest = Path(rundir) / source.name
    header = (
        f"# Copied from {source.resolve()} by `make workdir`; relative data paths resolved "
        "against its folder.\n"
    )
    dest.write_text(header + yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return dest


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or not argv[0]:
        print("usage: python -m oncoeval.workflow.rundir NAME [CONFIG]  (make workdir RUN=NAME CONFIG=path)",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        path = make_rundir(argv[0])
        copied = copy_config(argv[1], path) if len(argv) == 2 and argv[1] else None
    except ValueError as exc:
        print(f"rundir: {exc}", file=sys.stderr)
        return 2
    where = path.relative_to(REPO)
    print(where)
    if copied is not None:
        print(
            f"Config: {where / copied.name}; run it with: make -C {where} run CONFIG={copied.name}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
