"""Response shapes: a request may carry the shape of its answer, and each backend enforces it.

A records-level module (beside oncoeval.core.records): studies build shaped requests with it and
backends enforce the shapes, so neither imports from the judges.

The shape travels in the request's params as ``response_shape`` (so it is part of the cache
key), one of:

- ``{"json_schema": {...}, "name": "verdict"}``: the reply is one JSON value valid under the
  schema;
- ``{"choice": ["yes", "no"]}``: the reply is exactly one of the strings.

Each backend enforces a shape its own way, in its own module under oncoeval/backends/ (an API's
structured output, vLLM's structured outputs, llguidance in hf's own decode loop).
"""

from __future__ import annotations

import json

SHAPE_PARAM = "response_shape"


def json_schema_shape(schema: dict, name: str = "verdict") -> dict:
    return {"json_schema": schema, "name": name}


def choice_shape(options) -> dict:
    return {"choice": [str(o) for o in options]}


def shape_problem(shape) -> str:
    """Why ``shape`` is not a valid response shape ('' when it is)."""
    if not isinstance(shape, dict):
        return f"{SHAPE_PARAM} must be an object"
    kinds = [k for k in ("json_schema", "choice") if k in shape]
    if len(kinds) != 1:
        return f'{SHAPE_PARAM} needs exactly one of "json_schema" or "choice"'
    extra = set(shape) - {"json_schema", "choice", "name"}
    if extra:
        return f"{SHAPE_PARAM}: unknown keys {sorted(extra)}"
    if "choice" in shape:
        options = shape["choice"]
        if not isinstance(options, list) or not options:
            return f"{SHAPE_PARAM}.choice must be a non-empty list of strings"
        if not all(isinstance(o, str) and o for o in options):
            return f"{SHAPE_PARAM}.choice must be a non-empty list of strings"
        return ""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    schema = shape["json_schema"]
    if not isinstance(schema, dict):
        return f"{SHAPE_PARAM}.json_schema must be a JSON schema object"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"{SHAPE_PARAM}.json_schema is not a valid JSON schema: {exc.message}"
    name = shape.get("name", "verdict")
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        return f"{SHAPE_PARAM}.name must be letters, digits, _ or -"
    return ""


def shape_of(params: dict) -> dict | None:
    return (params or {}).get(SHAPE_PARAM)


def text_problem(shape: dict, text: str | None) -> str:
    """Why ``text`` does not have the shape ('' when it does)."""
    if text is None:
        return "no text"
    if "choice" in shape:
        return "" if text in shape["choice"] else f"not one of {shape['choice']}"
    from jsonschema import Draft202012Validator

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc.msg}"
    except (ValueError, RecursionError) as exc:  # an integer past 4,300 digits, deep nesting
        return f"not JSON: {type(exc).__name__}: {str(exc)[:100]}"
    errors = sorted(Draft202012Validator(shape["json_schema"]).iter_errors(value), key=str)
    return f"not valid under the schema: {errors[0].message}" if errors else ""
