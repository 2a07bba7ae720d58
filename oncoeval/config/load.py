"""The run's config as the workflow reads it, for the commands that run outside Snakemake
(``make export``, ``make publish``, ``make review``): the ``--configfile`` files layered in
order, or ``config/config.yaml`` (the demo) when none is given, then ``--config`` overrides,
with the schemas' defaults filled and ``only=`` applied.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..core.errors import ConfigError
from . import checks as oc
from . import files as configfile

# The workflow's config when no --configfile is given (the Snakefile's `configfile:`).
DEMO_CONFIG = "config/config.yaml"


def layered(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in (over or {}).items():
        out[key] = layered(out[key], value) if isinstance(value, dict) and isinstance(
            out.get(key), dict) else value  # fmt: skip
    return out


def load_config(root: Path, configfiles: list[str], overrides: list[str] = ()) -> dict:
    """The run's config as the workflow reads it: the config files layered in order (the demo's
    config/config.yaml only when none is given: a user's config starts from the schema's
    defaults), each read strictly (oncoeval.config.files), then Snakemake's ``--config KEY=VALUE``
    overrides (e.g. ``only=cancer_myth``), defaults filled, ``only`` applied."""
    config: dict = {}
    try:
        for path in configfiles or [DEMO_CONFIG]:
            path = Path(path) if Path(path).is_absolute() else root / path
            if not path.is_file():
                raise SystemExit(f"{path}: config file not found")
            config = layered(config, configfile.read(path))
    except ConfigError as exc:
        raise SystemExit(f"config: {exc}") from exc
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--config {item}: expected KEY=VALUE")
        config[key] = yaml.safe_load(value)
    problems = oc.schema_problems(config)
    if problems:
        raise SystemExit(f"config: {oc.format_problems(problems)}")
    oc.fill_workflow_config(config)
    problems = oc.expand_paths(config) + oc.apply_only(config)
    if problems:
        raise SystemExit(f"config: {oc.format_problems(problems)}")
    return config
