"""Filling a JSON Schema's defaults (no workflow imports, so backends and config both use it)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "config" / "config.schema.yaml"


def fill_schema_defaults(schema: dict, value):
    """A copy of ``value`` with the schema's defaults filled in, through nested objects.

    A missing key takes its ``default`` (itself filled when it is an object); a key given as
    null stays null. The one default-filler of the workflow: Snakemake's ``validate`` does not
    follow a ``$ref`` into a study's schema, and no study fills defaults of its own.
    """
    if not isinstance(value, dict) or "properties" not in schema:
        return copy.deepcopy(value)
    out = copy.deepcopy(value)
    for key, sub in schema["properties"].items():
        if key in out:
            out[key] = fill_schema_defaults(sub, out[key])
        elif "default" in sub:
            out[key] = fill_schema_defaults(sub, copy.deepcopy(sub["default"]))
    return out


@functools.cache
def raw_config_schema() -> dict:
    """config/config.schema.yaml as written (without the backends' parts; see
    oncoeval.config.checks.config_schema). Read only."""
    return yaml.safe_load(CONFIG_SCHEMA.read_text(encoding="utf-8"))


def top_level_defaults(key: str) -> dict:
    """The defaults of one top-level block of config/config.schema.yaml (e.g. ``bootstrap``),
    for settings objects built without a config (tests, library use)."""
    return fill_schema_defaults(raw_config_schema()["properties"][key], {})


def top_level_default(key: str):
    """The default of one top-level setting of config/config.schema.yaml (``claim_stale_s``),
    for functions called without a config (tests, library use)."""
    return copy.deepcopy(raw_config_schema()["properties"][key]["default"])
