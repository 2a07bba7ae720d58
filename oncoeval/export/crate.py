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
from pathlib import Path

from rocrate.model.contextentity import ContextEntity
from rocrate.rocrate import ROCrate

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
AGGREGATE_FOLDERS = ("tables", "figures")
SKIPPED = {"__pycache__", ".snakemake"}


def _files(root: Path, rel: str):
    path = root / rel
    if path.is_file():
        yield rel
    elif path.is_dir():
        for p in sorted(path.rglob("*")):
            if p.is_file() and not SKIPPED & set(p.parts):
                yield p.relative_to(root).as_posix()


def shared_results(root: Path, config: dict) -> list[str]:
    """Result files the crate carries: everything but the model store, the crate itself, and,
    of a study whose PHI text stays out, anything but its aggregate tables and figures."""
    studies = config.get("studies") or {}
    out = []
    for rel in _files(root, "results"):
        parts = rel.split("/")
        if parts[1] in ("publish", "models") or parts[-1].startswith("."):
            continue
        study, sub = (parts[2], parts[3:]) if parts[1] == "report" else (parts[1], parts[2:])
        if study in studies and redactor_for(config, study).redacts:
            if len(sub) < 2 or sub[0] not in AGGREGATE_FOLDERS:
                continue
        out.append(rel)
    return out


def build(root, config: dict, config_files: list[str], out_dir, started=None, ended=None):
    root, out_dir = Path(root), Path(out_dir)
    crate = ROCrate(version="1.1")
    crate.name = "OncoEval workflow run"
    crate.description = (
        "A run of the OncoEval Snakemake workflow: the workflow, its config, the results, "
        "their provenance, the reporting checklist and per-item exports."
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
        for rel in _files(base, part):
            crate.add_file(base / rel, rel)
    for rel in REPOSITORY_FILES:  # of the checkout that ran, beside the package
        if (package.parent / rel).exists():
            crate.add_file(package.parent / rel, rel)
    inputs = []
    for cf in config_files:
        rel = (
            Path(cf).resolve().relative_to(root.resolve()).as_posix()
            if Path(cf).is_absolute()
            else cf
        )
        if not (root / rel).exists():
            continue
        inputs.append(crate.get(rel) or crate.add_file(root / rel, rel))
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
    if out_dir.exists():
        import shutil

        shutil.rmtree(out_dir)
    crate.write(out_dir)
    return crate
