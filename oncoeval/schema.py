"""Filling a JSON Schema's defaults (no workflow imports, so backends and config both use it)."""

from __future__ import annotations

import copy


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
