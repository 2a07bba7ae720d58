"""``make export`` and ``make publish`` over a finished run (no model is called).

    python -m oncoeval.export [--configfile=PATH ...] [--config K=V ...]          # export
    python -m oncoeval.export publish [--configfile=PATH ...] [--config K=V ...]  # + the crate

The config is read as the workflow reads it (Snakefile): the ``--configfile`` files layered in
order, or ``config/config.yaml`` (the demo) when none is given, then ``--config`` overrides,
with the schemas' defaults filled.

Writes ``results/export/inspect/<study>/<model>.eval``, ``results/export/eee/data/...``,
``results/reporting_checklist.{md,html}`` and (publish) ``results/publish/crate/`` with
``results/publish/oncoeval-run-crate.zip``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from ..config import checks as oc
from ..config.load import DEMO_CONFIG, load_config
from ..core import layout
from ..core.layout import ResultPaths
from . import atomic, checklist, crate, eee, inspect_log
from .items import headlines, place_in_units, resampling_unit, study_items, unit_clusters
from .phi import redactor_for


def _provenance(root: Path) -> dict:
    path = root / layout.PROVENANCE
    if not path.exists():
        raise SystemExit(f"{path}: missing; run the workflow first (make run)")
    return json.loads(path.read_text())


def _library_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("oncoeval")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def unexported(root: Path, config: dict) -> dict[str, list[str]]:
    """Enabled studies with evaluated models none of which has answers under ``root``'s
    results/ (an export of such a study would hold no log), with those models."""
    out = {}
    for study in oc.enabled_studies(config):
        models = oc.study_evaluated_models(config, study)
        if models and not any((root / ResultPaths(study).responses(m)).is_dir() for m in models):
            out[study] = models
    return out


def export(
    root, config: dict, out=None, checklist_dir=None, config_files=()
) -> dict[str, list[Path]]:
    """The inspect logs and Every Eval Ever records of every enabled study and evaluated model
    (under ``out``, default ``results/export``), and the reporting checklist (in
    ``checklist_dir``, default ``results``; it names ``config_files``, the run's config).
    Returns the files written, by kind."""
    root = Path(root)
    out = Path(out) if out else root / layout.results(layout.EXPORT)
    checklist_dir = Path(checklist_dir) if checklist_dir else root / layout.RESULTS
    prov = _provenance(root)
    with atomic.folder(out) as tmp:
        written = _export(root, config, prov, tmp)
    # The paths as they are now, under ``out``.
    written = {k: [out / p.relative_to(tmp) for p in v] for k, v in written.items()}
    md, page = (
        checklist_dir / "reporting_checklist.md",
        checklist_dir / "reporting_checklist.html",
    )
    with atomic.file(md) as tmp_md, atomic.file(page) as tmp_page:
        checklist.write(root, config, prov, tmp_md, tmp_page, config_files or [DEMO_CONFIG])
    written["checklist"] = [md, page]
    return written


def _export(root: Path, config: dict, prov: dict, out: Path) -> dict[str, list[Path]]:
    """The inspect logs and Every Eval Ever records, written under ``out``."""
    created = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()
    data_files = {
        p: h for p, h in (prov.get("input_files_sha256") or {}).items()
        if not p.startswith("config/prompts/")
    }  # fmt: skip
    written: dict[str, list[Path]] = {"inspect": [], "eee": [], "checklist": []}
    missing = unexported(root, config)
    if missing:
        raise SystemExit(
            "Nothing to export of "
            + "; ".join(
                f"{s} (no {ResultPaths(s).responses()}/ of {', '.join(ms)})"
                for s, ms in missing.items()
            )
            + ": run the workflow with this config first (make run CONFIG=...)."
        )
    for study in oc.enabled_studies(config):
        redactor = redactor_for(config, study)
        unit = resampling_unit(study)
        for mid in oc.study_evaluated_models(config, study):
            if not (root / ResultPaths(study).responses(mid)).is_dir():
                continue
            items = study_items(root, study, mid, redactor)
            place_in_units(items, unit_clusters(root, config, study, mid))
            heads = headlines(root, study, mid)
            record = (prov.get("models") or {}).get(mid, {})
            log = inspect_log.eval_log(
                study, mid, items, heads, unit, record, redacted=redactor.redacts
            )
            written["inspect"].append(
                inspect_log.write(log, out / "inspect" / study / f"{mid}.eval")
            )
            evaluation = eee.Evaluation(
                study=study,
                mid=mid,
                record=record,
                headlines=heads,
                items=items,
                data_files=data_files,
                bootstrap=config["bootstrap"],
                unit=unit,
                created=created,
                library_version=_library_version(),
            )
            written["eee"].append(eee.write(out / "eee", evaluation, digest))
    return written


def publish(root, config: dict, configfiles: list[str], out=None) -> Path:
    """``make export``, then the crate (``out``, default ``results/publish``): the unpacked
    folder ``crate/`` (what rocrate-validator checks) and its zip. Returns the zip."""
    root = Path(root)
    config_files = list(configfiles) or [DEMO_CONFIG]
    out = Path(out) if out else root / layout.results(layout.PUBLISH)
    final = out / "oncoeval-run-crate.zip"
    # The previous crate goes first: a kill below leaves no crate rather than a stale one
    # beside the new export (each artifact is swapped in whole, oncoeval.export.atomic).
    atomic.remove(final)
    atomic.remove(out / "crate")
    export(root, config, config_files=config_files)
    crate.build(root, config, config_files, out / "crate")
    with atomic.file(final) as tmp:
        zipped = shutil.make_archive(str(tmp.with_suffix("")), "zip", out / "crate")
        os.replace(zipped, tmp)
    return final


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    what = argv.pop(0) if argv and argv[0] in ("export", "publish") else "export"
    parser = argparse.ArgumentParser(prog="python -m oncoeval.export [export|publish]")
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--config", nargs="*", default=[], help="Snakemake's KEY=VALUE overrides")
    parser.add_argument("--root", default=".")
    # The last run's further Snakemake arguments (results/.args) may hold options that do not
    # change the config (--cores...): only --configfile and --config are read.
    args, _ = parser.parse_known_args(argv)
    root = Path(args.root)
    config = load_config(root, args.configfile, args.config)
    print(f"Config: {' '.join(args.configfile) or DEMO_CONFIG + ' (the demo)'}")
    if what == "publish":
        print(f"Crate: {publish(root, config, args.configfile)}")
    else:
        for kind, paths in export(root, config, config_files=args.configfile).items():
            print(f"{kind}: {len(paths)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
