"""The workflow's own files, found from its source folder wherever Snakemake runs.

Snakemake runs OncoEval in the folder it is started in: results/, logs/, cache/ and every
relative path of a user's config are that folder's. The source need not be there: a folder
made by ``snakedeploy deploy-workflow`` holds only a copy of config/ and a Snakefile that uses
this workflow as a module. So what belongs to the workflow is read from its source (``SOURCE``,
the checkout this package is part of; the Snakefile puts its own folder first on ``sys.path``,
so that is the Snakefile's folder):

- prompt templates (``config/prompts/<study>/``, ``prompt_file``), schemas (oncoeval.core.schema),
  and what Snakemake finds next to the rules (scripts, envs, report templates);
- the demo data and method files a config names under ``resources/`` (the demo config and the
  study schemas' defaults do): a relative ``resources/...`` path that does not exist in the
  working folder is read from the source (``resolve_own_files``); one that exists there is the
  user's and is read there, as is every other relative path.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
# The source's folder of data files that configs name (demo inputs, method resources).
OWN_DATA = "resources"


def source_file(rel: str, source: Path = SOURCE) -> str:
    """``rel`` (a path inside the source) as the workflow names it: ``rel`` itself where the
    working folder shows the same file (the checkout, or a folder linking its parts, as
    ``oncoeval.workflow.rundir`` makes), else the absolute path in the source."""
    target = Path(source) / rel
    if Path(rel).resolve() == target.resolve():
        return rel
    return str(target)


def own_file(value: str, source: Path = SOURCE) -> str:
    """A config's path ``value``, with a relative ``resources/...`` path that the working folder
    lacks but the source holds pointed at the source's file; any other value as it is."""
    path = Path(value)
    if path.is_absolute() or not path.parts or path.parts[0] != OWN_DATA or path.exists():
        return value
    target = Path(source) / path
    return str(target) if target.exists() else value


def resolve_own_files(value, source: Path = SOURCE):
    """``value`` (a config or any part of it) with every string passed through ``own_file``;
    mappings and lists are changed in place, and returned."""
    if isinstance(value, str):
        return own_file(value, source)
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = resolve_own_files(item, source)
    elif isinstance(value, list):
        value[:] = [resolve_own_files(item, source) for item in value]
    return value
