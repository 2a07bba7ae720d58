"""The Workflow Run RO-Crate of a run (``make publish``), built with the ``rocrate`` library.

The crate (RO-Crate 1.1 with the Workflow Run Crate profile's entities, which
``rocrate-validator`` accepts at the REQUIRED level) holds the workflow (the Snakefile as its
main entity, the rules, scripts and the package), the run's config files, the results that may
be shared, ``provenance.json``, the reporting checklist and the exports, and one
``CreateAction`` that says the workflow made those results from that config.

Of a study marked ``contains_phi`` the crate carries only the aggregate tables and figures
(an allow-list: every per-item file, prepared input and review sheet may hold clinical text)
unless the config's ``report.include_phi_text`` is on; its exports stand in for the per-item
files (hashes and ids).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

from rocrate.model.contextentity import ContextEntity
from rocrate.rocrate import ROCrate

from ..config import checks as oc
from ..config.checks import enabled_studies, study_evaluated_models
from ..core import layout
from . import atomic
from .phi import redactor_for

PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": "Workflow RO-Crate",
}
WORKFLOW_PARTS = ("rules", "scripts", "oncoeval", "config", "envs", "profiles", "report")
REPOSITORY_FILES = ("LICENSE", "CITATION.cff", "README.md", "CHANGELOG.md", "pyproject.toml",
                    "requirements.lock")  # fmt: skip
# What the crate carries of a study whose text it may not: its aggregate tables and figures
# (results/{study}/... and their report pages, results/report/{study}/...).
AGGREGATE_FOLDERS = (layout.TABLES, layout.FIGURES)
SKIPPED = {"__pycache__", ".snakemake"}


def _hidden(rel: str) -> bool:
    """A dotfile or a file in a dot-folder (``.env``, ``.snakemake``, a half-written export)."""
    return any(part.startswith(".") for part in rel.split("/"))


def _files(root: Path, rel: str):
    path = root / rel
    if path.is_file():
        yield rel
    elif path.is_dir():
        for p in sorted(path.rglob("*")):
            relp = p.relative_to(root).as_posix()
            if p.is_file() and not SKIPPED & set(p.parts) and not _hidden(relp):
                yield relp


def tracked_files(root: Path, rel: str) -> list[str] | None:
    """The files under ``rel`` that git tracks in the checkout at ``root`` (None when it is no
    git checkout, or git is missing): what the repository holds, not what lies beside it."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--", rel], cwd=root, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    return sorted(n for n in names if (root / n).is_file() and not _hidden(n))


def workflow_files(base: Path, part: str) -> list[str]:
    """The files of one workflow part the crate carries: of ``config/`` only those git tracks
    (another team's config or a key file left there is not the workflow), never a dotfile."""
    if part == "config":
        tracked = tracked_files(base, part)
        if tracked is not None:
            return tracked
    return list(_files(base, part))


def _provenance_files(root: Path) -> list[str]:
    """The input files provenance.json hashed (the run's data and prompts)."""
    path = root / layout.PROVENANCE
    if not path.exists():
        return []
    return list(json.loads(path.read_text()).get("input_files_sha256") or {})


def shared_results(root: Path, config: dict) -> list[str]:
    """Result files the crate carries: the run's own (its studies', its report pages of them,
    its exports and run-level files), never the model store, a cache, the crate itself or a
    dotfile; of a study whose PHI text stays out, nothing but its aggregate tables and figures."""
    studies = config.get("studies") or {}
    own = set(oc.enabled_studies(config)) | ({"adhoc"} if config.get("adhoc") else set())
    out = []
    for rel in _files(root, layout.RESULTS):
        parts = rel.split("/")
        if (
            parts[1] in (layout.PUBLISH, layout.MODELS)
            or len(parts) > 2
            and not _own_result(parts, own)
        ):
            continue
        study, sub = (parts[2], parts[3:]) if parts[1] == layout.REPORT else (parts[1], parts[2:])
        if study in studies and redactor_for(config, study).redacts:
            if len(sub) < 2 or sub[0] not in AGGREGATE_FOLDERS:
                continue
        out.append(rel)
    return out


def _own_result(parts: list[str], own: set[str]) -> bool:
    """Whether ``results/<parts...>`` (in a folder) belongs to the run's studies."""
    if parts[1] == layout.EXPORT:
        return True
    if parts[1] == layout.REPORT:
        return len(parts) == 3 or parts[2] in own
    return parts[1] in own


# Where a config file from outside the run directory lies in the crate.
OUTSIDE_CONFIGS = "run-config"


def config_destination(root: Path, config_file) -> str:
    """The crate path of one of the run's config files: its path under the run directory, or
    ``run-config/<name>`` for a file outside it (copied in, so that the crate holds it)."""
    path = Path(config_file)
    full = path if path.is_absolute() else root / path
    # Both as written (a linked config/ of a run directory stays config/) and resolved.
    for inside, top in ((Path(os.path.abspath(full)), Path(os.path.abspath(root))),
                        (full.resolve(), root.resolve())):  # fmt: skip
        if inside.is_relative_to(top):
            return inside.relative_to(top).as_posix()
    return f"{OUTSIDE_CONFIGS}/{path.name}"


def run_summary(config: dict, config_files: list[str], data_files) -> str:
    """One sentence naming the run's models per study, its data files and its config."""
    studies = "; ".join(
        f"{s}: {', '.join(study_evaluated_models(config, s)) or 'no model'}"
        for s in enabled_studies(config)
    )
    return (
        f"Models per study: {studies or 'none'}. Data: {', '.join(data_files) or 'none'}. "
        f"Config: {', '.join(config_files)}."
    )


def build(root, config: dict, config_files: list[str], out_dir, started=None, ended=None):
    root, out_dir = Path(root), Path(out_dir)
    crate = ROCrate(version="1.1")
    names = [Path(cf).name for cf in config_files]
    crate.name = f"OncoEval workflow run ({', '.join(names)})"
    data_files = sorted(p for p in _provenance_files(root) if not p.startswith("config/prompts/"))
    crate.description = (
        "A run of the OncoEval Snakemake workflow: the workflow, its config, the results, "
        "their provenance, the reporting checklist and per-item exports. "
        + run_summary(config, [config_destination(root, cf) for cf in config_files], data_files)
    )
    crate.license = "https://spdx.org/licenses/MIT"
    crate.root_dataset["conformsTo"] = [{"@id": i} for i in PROFILES]
    for pid, name in PROFILES.items():
        crate.add(ContextEntity(crate, pid, properties={
            "@type": "CreativeWork", "name": name, "version": pid.rsplit("/", 1)[-1]}))  # fmt: skip
    workflow = crate.add_workflow(root / "Snakefile", "Snakefile", main=True, lang="snakemake")
    package = Path(__file__).resolve().parents[1]  # the oncoeval package that ran
    for part in WORKFLOW_PARTS:
        base = package.parent if part == "oncoeval" else root
        for rel in workflow_files(base, part):
            crate.add_file(base / rel, rel)
    for rel in REPOSITORY_FILES:  # of the checkout that ran, beside the package
        if (package.parent / rel).exists():
            crate.add_file(package.parent / rel, rel)
    inputs = []
    for cf in config_files:
        source = Path(cf) if Path(cf).is_absolute() else root / cf
        if not source.is_file():
            raise FileNotFoundError(f"{cf}: the run's config file is missing")
        rel = config_destination(root, cf)
        inputs.append(crate.get(rel) or crate.add_file(source, rel))
    results = [crate.add_file(root / rel, rel) for rel in shared_results(root, config)]
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    crate.add_action(
        workflow,
        object=inputs,
        result=results,
        properties={
            "name": "Run of the OncoEval workflow",
            "startTime": (started or now).isoformat(),
            "endTime": (ended or now).isoformat(),
        },
    )
    # Written beside its place under a hidden name, then swapped in whole (oncoeval.export.atomic).
    with atomic.folder(out_dir) as tmp:
        crate.write(tmp)
    return crate
